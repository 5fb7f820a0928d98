/**
 * The extension's own runs, traced (docs/traces.md, "Sources"): the SDK's tracing is on for our runs, with one
 * processor of ours as the only one — nothing is sent to OpenAI's traces dashboard unless the user opts in — which
 * keeps the spans of the traces our runs started and, when a run has settled and its turn is known, hands them to the
 * trace store as records linked exactly to the session, branch and turn.
 * sdkSpans.ts says what is kept of each span.
 */
import {
  BatchTraceProcessor,
  OpenAITracingExporter,
  generateTraceId,
  setTraceProcessors,
  setTracingDisabled,
  type Agent,
  type AgentInputItem,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type Span,
  type SpanData,
  type Trace,
  type TracingProcessor,
} from '@openai/agents';
import { toStoredItem } from '../store/format/itemShape';
import { INPUT_ATTRIBUTES, inputAttributes } from '../store/traces/recordedInput';
import type { SpanRecord, TraceLink } from '../store/traces/spanRecord';
import { randomBytes } from 'node:crypto';
import { otlpTraceId, sdkSpanRecord, type SdkSpanJson } from './sdkSpans';

/** Where a run's records go (the extension: the store worker's trace store). */
export type TraceSink = (records: SpanRecord[]) => Promise<unknown>;

/** The run's tracing: where its spans go, and whether a copy goes to OpenAI's dashboard too (off by default). */
export interface RunTracingOptions {
  sink: TraceSink;
  /** The user's opt-in (`agentSessions.traces.sendToOpenAI`): the SDK's own exporter runs beside ours. */
  sendToOpenAI?: boolean;
}

type AnySpan = Span<SpanData>;

/** The one processor of this process: it keeps the spans of watched traces until their run takes them. */
class RunSpanCollector implements TracingProcessor {
  private readonly watched = new Map<string, AnySpan[]>();

  watch(traceId: string): void {
    this.watched.set(traceId, []);
  }

  take(traceId: string): AnySpan[] {
    const spans = this.watched.get(traceId) ?? [];
    this.watched.delete(traceId);
    return spans;
  }

  async onTraceStart(_trace: Trace): Promise<void> {}
  async onTraceEnd(_trace: Trace): Promise<void> {}
  async onSpanStart(_span: AnySpan): Promise<void> {}
  async onSpanEnd(span: AnySpan): Promise<void> {
    this.watched.get(span.traceId)?.push(span);
  }
  async shutdown(): Promise<void> {}
  async forceFlush(): Promise<void> {}
}

const collector = new RunSpanCollector();
let openAiProcessor: BatchTraceProcessor | undefined;

/**
 * Makes our collector the SDK's processor (and OpenAI's exporter beside it when the user opted in), and tracing on.
 * At every traced run, not once: the SDK's tracing settings are global to the process, and a user's agent module
 * (which gets our SDK) may have turned tracing off or set processors of its own since.
 */
function install(sendToOpenAI: boolean): void {
  if (sendToOpenAI) openAiProcessor ??= new BatchTraceProcessor(new OpenAITracingExporter());
  setTraceProcessors(sendToOpenAI && openAiProcessor ? [collector, openAiProcessor] : [collector]);
  setTracingDisabled(false);
}

/** One run's trace: the id to give the runner, and the records once the run's turn is known. */
export interface RunTrace {
  traceId: string;
  /** The spans the run ended, as records linked to `link`; the trace is forgotten afterwards. */
  finish(link: TraceLink): SpanRecord[];
  /** The model provider with each request's input recorded (docs/context.md, "Recorded input"). */
  provider(provider: ModelProvider | undefined): ModelProvider | undefined;
  /** The agent with its model's requests recorded, when its model is an instance (a name goes through `provider`). */
  agent(agent: Agent): Agent;
}

/** What a model request carried, and when it was made (microseconds since the epoch). */
interface CapturedRequest {
  atUs: number;
  items: unknown[];
  instructions: string | null;
  tools: unknown[];
}

/**
 * A model that notes each request's input before the wrapped one sends it. The SDK's own spans do not carry it all: a
 * Responses request's span holds its items in the SDK's shape and neither the instructions nor the tools, a chat
 * model's span its converted messages, a custom model's whatever it chose.
 */
function capturingModel(model: Model, capture: (request: ModelRequest) => void): Model {
  return {
    ...(model.supportsPromptModelSelection !== undefined ? { supportsPromptModelSelection: model.supportsPromptModelSelection } : {}),
    getResponse: (request) => {
      capture(request);
      return model.getResponse(request);
    },
    async *getStreamedResponse(request) {
      capture(request);
      yield* model.getStreamedResponse(request);
    },
    ...(model.getRetryAdvice ? { getRetryAdvice: (args) => model.getRetryAdvice!(args) } : {}),
  };
}

/** The request's items as the Responses API receives them (the stored shape: what the session file holds too). */
function capturedOf(request: ModelRequest): CapturedRequest {
  const input: AgentInputItem[] = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  return {
    atUs: Date.now() * 1000,
    items: input.map((item) => {
      try {
        const stored = toStoredItem(item) as Record<string, unknown>;
        // The SDK's converter sends a user or system message without its optional `type: 'message'` (the store keeps it).
        if (typeof stored.role === 'string' && stored.role !== 'assistant' && stored.type === 'message') {
          const { type: _type, ...message } = stored;
          return message;
        }
        return stored;
      } catch {
        return item;
      }
    }),
    instructions: request.systemInstructions ?? null,
    tools: [...(request.tools ?? []), ...(request.handoffs ?? [])].map((t) => JSON.parse(JSON.stringify(t)) as unknown),
  };
}

/**
 * Each captured request's input onto the model span it became: the first model span of the trace that started at or
 * after the capture (requests of one run are made one after another). A capture no span took (a model that opens no
 * span) becomes a span of its own, so its input is kept all the same.
 */
function attachInputs(records: SpanRecord[], captured: readonly CapturedRequest[], traceId: string): SpanRecord[] {
  const models = records.filter((r) => r.kind === 'model').sort((a, b) => a.startUs - b.startUs);
  const taken = new Set<SpanRecord>();
  const extra: SpanRecord[] = [];
  for (const c of captured) {
    // Span times are whole milliseconds: a span started in the capture's millisecond may read as before it.
    const span = models.find((m) => !taken.has(m) && m.startUs >= c.atUs - 1000);
    const attrs = inputAttributes(c.items, c.instructions, c.tools);
    if (span) {
      taken.add(span);
      // The capture replaces what the SDK's own span held of the input (its `_input`, in the SDK's shape), cut count
      // included.
      delete span.attributes[INPUT_ATTRIBUTES.cutItems];
      Object.assign(span.attributes, attrs);
      continue;
    }
    extra.push({
      traceId: records[0]?.traceId ?? traceId,
      spanId: randomBytes(8).toString('hex'),
      parentSpanId: null,
      name: 'model request',
      kind: 'model',
      spanKind: 3,
      startUs: c.atUs,
      endUs: c.atUs,
      status: 'unset',
      error: null,
      model: null,
      inputTokens: null,
      outputTokens: null,
      cachedTokens: null,
      reasoningTokens: null,
      toolName: null,
      agentName: null,
      link: records[0]?.link ?? null,
      source: 'extension',
      service: 'agent-session-inspector',
      attributes: attrs,
      resource: { 'service.name': 'agent-session-inspector' },
      events: [],
      truncated: false,
    });
  }
  return [...records, ...extra];
}

export function startRunTrace(options: RunTracingOptions): RunTrace {
  install(options.sendToOpenAI === true);
  const traceId = generateTraceId();
  collector.watch(traceId);
  const captured: CapturedRequest[] = [];
  const capture = (request: ModelRequest): void => {
    try {
      captured.push(capturedOf(request));
    } catch {
      // An input that cannot be copied is not recorded; the run goes on.
    }
  };
  const wrapped = new WeakMap<Model, Model>();
  const wrap = (model: Model): Model => {
    let w = wrapped.get(model);
    if (!w) wrapped.set(model, (w = capturingModel(model, capture)));
    return w;
  };
  return {
    traceId,
    finish: (link) => {
      const records = collector.take(traceId).map((s) => sdkSpanRecord(spanJson(s), link));
      return attachInputs(records, captured, otlpTraceId(traceId)).map((r) => ({ ...r, link: r.link ?? link }));
    },
    provider: (provider) =>
      provider && {
        getModel: async (name) => wrap(await provider.getModel(name)),
      },
    agent: (agent) => (typeof agent.model === 'object' && agent.model !== null ? agent.clone({ model: wrap(agent.model) }) : agent),
  };
}

/** A live span as the SDKs export one (the getters; `toJSON` leaves out data an exporter should not send). */
function spanJson(span: AnySpan): SdkSpanJson {
  return {
    id: span.spanId,
    trace_id: span.traceId,
    parent_id: span.parentId,
    started_at: span.startedAt,
    ended_at: span.endedAt,
    span_data: span.spanData as unknown as Record<string, unknown>,
    error: span.error,
  };
}
