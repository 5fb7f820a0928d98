/**
 * An offline `Model` for `@openai/agents` that answers from a script instead of an API, so the real runner (tool
 * calls, session persistence, usage) can run in demos and tests without a key or a network.
 */
import { Usage, withGenerationSpan, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import type { StreamEvent } from '@openai/agents-core/types';

/** What the model does for one request: call tools, or answer with text. */
export type ScriptedReply =
  { kind: 'text'; text: string } | { kind: 'tools'; calls: { name: string; arguments: Record<string, unknown> }[] };

/** Decides the reply from the request's input items (history + new input + tool outputs). */
export type ScriptPolicy = (input: AgentInputItem[], request: ModelRequest) => ScriptedReply;

let counter = 0;
/** `tag` keeps ids apart from those of another process's runs (a file the demo wrote holds `call_000001`…). */
const nextId = (prefix: string, tag = ''): string => `${prefix}_${tag}${(++counter).toString(36).padStart(6, '0')}`;

/** Rough token count: deterministic, proportional to text length, like a real tokenizer's order of magnitude. */
function tokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}

/** The model name a scripted request's span gives (no price is known for it, so no cost is shown). */
export const SCRIPTED_MODEL_NAME = 'scripted-offline-model';

export class ScriptedModel implements Model {
  constructor(
    private readonly policy: ScriptPolicy,
    private readonly name = SCRIPTED_MODEL_NAME,
    /**
     * Put in every id this model makes. The demo writes its file with none (its ids are the same on every machine);
     * the demo's agent module gives one, so a re-run's call ids never repeat the recorded ones in the same history.
     */
    private readonly idTag = '',
  ) {}

  /**
   * One request, in a generation span with its model and usage, as the SDK asks of a model that is not OpenAI's
   * (its own models open a response span): so a traced run's Timeline shows its model requests (a no-op untraced).
   */
  getResponse(request: ModelRequest): Promise<ModelResponse> {
    return withGenerationSpan(
      async (span) => {
        const response = this.respond(request);
        span.spanData.usage = { input_tokens: response.usage.inputTokens, output_tokens: response.usage.outputTokens };
        return response;
      },
      { data: { model: this.name } },
    );
  }

  private respond(request: ModelRequest): ModelResponse {
    request.signal?.throwIfAborted();
    const input = typeof request.input === 'string' ? [{ role: 'user' as const, content: request.input }] : request.input;
    const reply = this.policy(input, request);
    const responseId = nextId('resp', this.idTag);
    const output: ModelResponse['output'] =
      reply.kind === 'text'
        ? [
            {
              id: nextId('msg', this.idTag),
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: reply.text }],
            },
          ]
        : reply.calls.map((c) => ({
            id: nextId('fc', this.idTag),
            type: 'function_call' as const,
            callId: nextId('call', this.idTag),
            name: c.name,
            arguments: JSON.stringify(c.arguments),
            status: 'completed' as const,
          }));
    const inputTokens = tokens(input) + tokens(request.systemInstructions);
    const outputTokens = tokens(output);
    // A stable share of the prompt counts as cached, as a provider's prompt cache would report it.
    const cached = Math.floor(inputTokens / 64) * 32;
    const usage = new Usage({
      requests: 1,
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      inputTokensDetails: { cached_tokens: cached },
      outputTokensDetails: { reasoning_tokens: reply.kind === 'tools' ? 8 : 0 },
    });
    return { usage, output, responseId };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const response = await this.getResponse(request);
    yield { type: 'response_started' };
    for (const item of response.output) {
      if (item.type === 'message' && item.role === 'assistant') {
        for (const part of item.content) {
          if (part.type !== 'output_text') continue;
          // Stream the text in word-sized deltas, as a real model does.
          for (const piece of part.text.match(/\S+\s*/g) ?? []) {
            request.signal?.throwIfAborted();
            yield { type: 'output_text_delta', delta: piece };
          }
        }
      }
    }
    const u = response.usage;
    yield {
      type: 'response_done',
      response: {
        id: response.responseId ?? nextId('resp', this.idTag),
        usage: {
          requests: u.requests,
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          totalTokens: u.totalTokens,
          inputTokensDetails: u.inputTokensDetails,
          outputTokensDetails: u.outputTokensDetails,
        },
        // The stream event's schema types output items a little narrower than ModelResponse does; the runner
        // parses them with the same item schema.
        output: response.output as never,
      },
    };
  }
}
