/**
 * The extension's own runs, traced (docs/traces.md, "Sources"): the SDK's tracing is on for our runs, with one
 * processor of ours as the only one — nothing is sent to OpenAI's traces dashboard unless the user opts in — which
 * keeps the spans of the traces our runs started and, when a run has settled and its turn is known, hands them to the
 * trace store as records linked exactly to the session, branch and turn.
 *
 * Kept from each span: its timing, parent, error, and what the timeline shows (the agent, the model and usage of a
 * model request, the tool, the handoff's agents, a guardrail's verdict). Prompts and outputs (the SDK's sensitive
 * data) are not kept: they are in the session file already.
 */
import {
  BatchTraceProcessor,
  OpenAITracingExporter,
  generateTraceId,
  setTraceProcessors,
  setTracingDisabled,
  type Span,
  type SpanData,
  type Trace,
  type TracingProcessor,
} from '@openai/agents';
import type { SpanRecord, TraceLink } from '../store/traces/spanRecord';
import type { Attributes } from '../store/traces/otlpSpans';

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
}

export function startRunTrace(options: RunTracingOptions): RunTrace {
  install(options.sendToOpenAI === true);
  const traceId = generateTraceId();
  collector.watch(traceId);
  return { traceId, finish: (link) => collector.take(traceId).map((s) => sdkSpanRecord(s, link)) };
}

/** The SDK's ids → OTLP's: its trace id is `trace_` + 32 hex digits; its span ids `span_` + 24, of which 16 are kept. */
export function otlpTraceId(sdkId: string): string {
  const hex = sdkId.replace(/^trace_/, '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : hex.padStart(32, '0').slice(-32);
}
export function otlpSpanId(sdkId: string): string {
  const hex = sdkId.replace(/^span_/, '').toLowerCase();
  return hex.padStart(16, '0').slice(-16);
}

const micros = (iso: string | null, fallback: number): number => {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) ? ms * 1000 : fallback;
};
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** What a model request's response says: the model, and the usage in the Responses API's shape. */
function responseFacts(response: unknown): Pick<SpanRecord, 'model' | 'inputTokens' | 'outputTokens' | 'cachedTokens' | 'reasoningTokens'> {
  const r = (response ?? {}) as {
    model?: unknown;
    usage?: {
      input_tokens?: unknown;
      output_tokens?: unknown;
      input_tokens_details?: { cached_tokens?: unknown };
      output_tokens_details?: { reasoning_tokens?: unknown };
    };
  };
  return {
    model: typeof r.model === 'string' ? r.model : null,
    inputTokens: num(r.usage?.input_tokens),
    outputTokens: num(r.usage?.output_tokens),
    cachedTokens: num(r.usage?.input_tokens_details?.cached_tokens),
    reasoningTokens: num(r.usage?.output_tokens_details?.reasoning_tokens),
  };
}

/** An SDK span → a record of the trace store, linked to the run's session, branch and turn. */
export function sdkSpanRecord(span: AnySpan, link: TraceLink): SpanRecord {
  const data = span.spanData;
  const now = Date.now() * 1000;
  const startUs = micros(span.startedAt, now);
  const endUs = Math.max(startUs, micros(span.endedAt, startUs));
  const attributes: Attributes = {
    'openai.agents.span_type': data.type,
    'openai.agents.trace_id': span.traceId,
    'openai.agents.span_id': span.spanId,
  };
  const base = {
    model: null as string | null,
    inputTokens: null as number | null,
    outputTokens: null as number | null,
    cachedTokens: null as number | null,
    reasoningTokens: null as number | null,
    toolName: null as string | null,
    agentName: null as string | null,
  };
  let kind: SpanRecord['kind'] = 'other';
  let name: string = data.type;
  let error = span.error ? span.error.message : null;
  switch (data.type) {
    case 'agent':
      kind = 'agent';
      name = `agent ${data.name}`;
      base.agentName = data.name;
      break;
    case 'response':
      kind = 'model';
      Object.assign(base, responseFacts(data._response));
      name = base.model ? `response ${base.model}` : 'response';
      if (data.response_id) attributes['gen_ai.response.id'] = data.response_id;
      break;
    case 'generation': {
      kind = 'model';
      const usage = data.usage ?? {};
      base.model = data.model ?? null;
      base.inputTokens = num(usage.input_tokens);
      base.outputTokens = num(usage.output_tokens);
      name = data.model ? `generation ${data.model}` : 'generation';
      break;
    }
    case 'function':
      kind = data.mcp_data ? 'mcp' : 'tool';
      name = data.name;
      base.toolName = data.name;
      break;
    case 'handoff':
      kind = 'handoff';
      name = `handoff ${data.from_agent ?? '?'} → ${data.to_agent ?? '?'}`;
      base.agentName = data.to_agent ?? null;
      if (data.from_agent) attributes['handoff.from_agent'] = data.from_agent;
      if (data.to_agent) attributes['handoff.to_agent'] = data.to_agent;
      break;
    case 'guardrail':
      kind = 'guardrail';
      name = data.name;
      attributes['guardrail.triggered'] = data.triggered;
      // A tripped guardrail stops the run: the timeline marks it as the step that failed.
      if (data.triggered) error ??= `guardrail ${data.name} tripped`;
      break;
    case 'mcp_tools':
      kind = 'mcp';
      name = `list tools ${data.server ?? ''}`.trim();
      break;
    case 'custom':
    case 'task':
      name = data.name;
      break;
    case 'transcription':
    case 'speech':
    case 'speech_group':
      // Voice pipelines: the model when the SDK says which.
      base.model = 'model' in data && typeof data.model === 'string' ? data.model : null;
      break;
    case 'turn':
      // The SDK's "turn" is one pass of its loop (a model request and the tools it called), not a conversation's
      // turn: "step" keeps the timeline from calling two different things turns.
      name = `step ${data.turn} (${data.agent_name})`;
      base.agentName = data.agent_name;
      attributes['openai.agents.turn'] = data.turn;
      break;
  }
  return {
    traceId: otlpTraceId(span.traceId),
    spanId: otlpSpanId(span.spanId),
    parentSpanId: span.parentId ? otlpSpanId(span.parentId) : null,
    name,
    kind,
    spanKind: kind === 'model' ? 3 : 1,
    startUs,
    endUs,
    status: error ? 'error' : 'ok',
    error,
    ...base,
    link,
    source: 'extension',
    service: 'agent-session-inspector',
    attributes,
    resource: { 'service.name': 'agent-session-inspector' },
    events: [],
    truncated: false,
  };
}
