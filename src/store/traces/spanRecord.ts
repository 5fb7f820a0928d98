/**
 * A span as the trace store keeps it: OTLP's span with what the timeline needs read out of its attributes (what kind
 * of step it was, the model and the usage of a model request, the tool, the agent) and the ids that link it to a
 * session, a branch and a turn. Every attribute is kept as sent, so nothing a convention we do not read carries is
 * lost.
 */
import type { Attributes, OtlpEvent, OtlpStatusCode, SpanValueKinds } from './otlpSpans';

/** What a span was, for the timeline. */
export type SpanKind = 'agent' | 'model' | 'tool' | 'handoff' | 'guardrail' | 'mcp' | 'other';
export const SPAN_KINDS: readonly SpanKind[] = ['agent', 'model', 'tool', 'handoff', 'guardrail', 'mcp', 'other'];

/** Where a span came from. */
export type SpanSource = 'extension' | 'command' | 'otlp' | 'import';

/** What links a span's trace to a session (and, when known, a branch and a turn). */
export interface TraceLink {
  sessionId: string;
  /** Known when the run that made the trace said so (the extension's runs, an agent command's events). */
  branchId?: string | null;
  turnNumber?: number | null;
}

/**
 * What an OTLP span carried that the record does not otherwise keep, so that export writes it back as it came
 * (otlpExport.ts): the record's `status` is `error` also when only an exception event or `error.type` says so, and its
 * `error` holds a status message only of an error.
 */
export interface OtlpDetail {
  /** The instrumentation scope's name (null: none). */
  scope: string | null;
  /** The status code and message as sent. */
  status: OtlpStatusCode;
  statusMessage: string | null;
  /** The kinds of the values that their JSON cannot tell (`ValueKind`). */
  kinds: SpanValueKinds;
}

export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: SpanKind;
  /** OTLP's SpanKind number (internal, server, client, …), kept for export. */
  spanKind: number;
  startUs: number;
  endUs: number;
  status: OtlpStatusCode;
  /** The error's message (the status message, an exception event's message or `error.type`). */
  error: string | null;
  /** Model requests: the model that answered (else the one asked for). */
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  reasoningTokens: number | null;
  /** Tools (and MCP calls, handoffs, guardrails): the name. */
  toolName: string | null;
  agentName: string | null;
  /** The session this span's trace belongs to, as far as the span itself says. */
  link: TraceLink | null;
  source: SpanSource;
  service: string | null;
  attributes: Attributes;
  resource: Attributes;
  events: OtlpEvent[];
  truncated: boolean;
  /** Spans read from OTLP (the receiver, a file, an agent command's OTLP event): see `OtlpDetail`. */
  otlp?: OtlpDetail;
}
