/**
 * A span as the trace store keeps it: OTLP's span with what the timeline needs read out of its attributes (what kind
 * of step it was, the model and the usage of a model request, the tool, the agent) and the ids that link it to a
 * session, a branch and a turn. Every attribute is kept as sent, so nothing a convention we do not read carries is
 * lost.
 */
import type { Attributes, OtlpEvent, OtlpStatusCode } from './otlpSpans';

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
}
