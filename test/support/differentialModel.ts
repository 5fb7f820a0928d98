/**
 * A deterministic in-process `Model` for the differential tests (test/unit/store/differential): it answers from a
 * queue of scripted replies and numbers every id it makes from its own counter, so two runs of the same scenario (one
 * on `MemorySession`, one on `AdvancedSQLiteSession`) produce identical items, and a child process given the same
 * prefix continues the numbering the same way on both sides. Every request's input is recorded, so a test can check
 * that both sessions made the runner send the same thing.
 */
import { Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import type { StreamEvent } from '@openai/agents-core/types';

/** One output item of a scripted reply. */
export type ScriptedPart =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; args: Record<string, unknown> }
  | { kind: 'reasoning'; text: string }
  | { kind: 'compaction' };

/** A reply: output items, or a failure of the model call. */
export type ScriptedModelReply = ScriptedPart[] | { error: string };

export const say = (text: string): ScriptedPart[] => [{ kind: 'text', text }];
export const callTools = (...calls: [name: string, args: Record<string, unknown>][]): ScriptedPart[] =>
  calls.map(([name, args]) => ({ kind: 'call', name, args }));
export const think = (text: string, then: ScriptedPart[]): ScriptedPart[] => [{ kind: 'reasoning', text }, ...then];
export const compactThen = (then: ScriptedPart[]): ScriptedPart[] => [{ kind: 'compaction' }, ...then];

export interface RecordedModelRequest {
  input: AgentInputItem[];
  systemInstructions: string | undefined;
  streamed: boolean;
}

export class DifferentialModel implements Model {
  readonly requests: RecordedModelRequest[] = [];
  private counter = 0;

  /**
   * @param replies consumed in order, one per model call; a call beyond the script fails the run.
   * @param prefix starts every id, so ids from different models (or processes) never collide.
   * @param streamDelayMs pause before each streamed text delta (for cancelling mid-stream).
   */
  constructor(
    private readonly replies: ScriptedModelReply[],
    private readonly prefix = 'm',
    private readonly streamDelayMs = 0,
  ) {}

  /** Replies not used yet. */
  get remaining(): number {
    return this.replies.length;
  }

  private id(kind: string): string {
    return `${kind}_${this.prefix}${++this.counter}`;
  }

  private respond(request: ModelRequest, streamed: boolean): ModelResponse {
    request.signal?.throwIfAborted();
    const input = typeof request.input === 'string' ? [{ role: 'user' as const, content: request.input }] : request.input;
    this.requests.push({ input: structuredClone(input), systemInstructions: request.systemInstructions, streamed });
    const reply = this.replies.shift();
    if (reply === undefined)
      throw new Error(`DifferentialModel(${this.prefix}): no scripted reply left for request ${this.requests.length}`);
    if (!Array.isArray(reply)) throw new Error(reply.error);
    const output = reply.map((part): Record<string, unknown> => {
      switch (part.kind) {
        case 'text':
          return {
            id: this.id('msg'),
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: part.text }],
          };
        case 'call':
          return {
            id: this.id('fc'),
            type: 'function_call',
            callId: this.id('call'),
            name: part.name,
            arguments: JSON.stringify(part.args),
            status: 'completed',
          };
        case 'reasoning':
          return { id: this.id('rs'), type: 'reasoning', content: [{ type: 'input_text', text: part.text }] };
        case 'compaction':
          return { id: this.id('cmp'), type: 'compaction', encrypted_content: `enc:${this.prefix}:${this.requests.length}` };
      }
    });
    const inputTokens = 10 + Math.ceil(JSON.stringify(input).length / 16);
    const outputTokens = 1 + Math.ceil(JSON.stringify(output).length / 16);
    const usage = new Usage({
      requests: 1,
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      inputTokensDetails: { cached_tokens: Math.floor(inputTokens / 4) },
      outputTokensDetails: { reasoning_tokens: reply.some((p) => p.kind === 'reasoning') ? 5 : 0 },
    });
    return { usage, output: output as unknown as ModelResponse['output'], responseId: this.id('resp') };
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    return this.respond(request, false);
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const response = this.respond(request, true);
    yield { type: 'response_started' };
    for (const item of response.output) {
      if (item.type !== 'message' || item.role !== 'assistant') continue;
      for (const part of item.content) {
        if (part.type !== 'output_text') continue;
        for (const piece of part.text.match(/\S+\s*/g) ?? []) {
          if (this.streamDelayMs > 0) await new Promise((r) => setTimeout(r, this.streamDelayMs));
          request.signal?.throwIfAborted();
          yield { type: 'output_text_delta', delta: piece };
        }
      }
    }
    const u = response.usage;
    yield {
      type: 'response_done',
      response: {
        id: response.responseId ?? this.id('resp'),
        usage: {
          requests: u.requests,
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          totalTokens: u.totalTokens,
          inputTokensDetails: u.inputTokensDetails,
          outputTokensDetails: u.outputTokensDetails,
        },
        output: response.output as never,
      },
    };
  }
}
