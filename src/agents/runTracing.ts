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
  type Span,
  type SpanData,
  type Trace,
  type TracingProcessor,
} from '@openai/agents';
import type { SpanRecord, TraceLink } from '../store/traces/spanRecord';
import { sdkSpanRecord, type SdkSpanJson } from './sdkSpans';

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
  return { traceId, finish: (link) => collector.take(traceId).map((s) => sdkSpanRecord(spanJson(s), link)) };
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
