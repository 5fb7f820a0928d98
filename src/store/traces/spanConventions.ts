/**
 * Reads what a span was from the conventions agents' tracers write (docs/traces.md, "Which attributes are read"):
 * ours (`agent_sessions.*`, written by the extension's runs and the agent-command examples), OpenTelemetry's GenAI
 * conventions (`gen_ai.*`, old and new names of the usage counts, and Sentry's names of the cached and reasoning
 * counts) and OpenInference's (`openinference.span.kind`,
 * `llm.*`, `session.id`). The first convention that says something wins, in that order.
 */
import type { AttrValue, Attributes, OtlpSpan } from './otlpSpans';
import { SPAN_KINDS, type SpanKind, type SpanRecord, type SpanSource, type TraceLink } from './spanRecord';

/** Our own attributes: the run that made the span knew these exactly. */
export const OUR_ATTRIBUTES = {
  kind: 'agent_sessions.span.kind',
  sessionId: 'agent_sessions.session_id',
  branchId: 'agent_sessions.branch_id',
  turnNumber: 'agent_sessions.turn_number',
} as const;

const OPENINFERENCE_KINDS: Record<string, SpanKind> = {
  LLM: 'model',
  EMBEDDING: 'model',
  TOOL: 'tool',
  AGENT: 'agent',
  GUARDRAIL: 'guardrail',
};

const GENAI_OPERATIONS: Record<string, SpanKind> = {
  chat: 'model',
  text_completion: 'model',
  generate_content: 'model',
  embeddings: 'model',
  responses: 'model',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  create_agent: 'agent',
};

const text = (v: AttrValue | undefined): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
const count = (v: AttrValue | undefined): number | null => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.round(n) : null;
};
/** The first of `keys` the span (then its resource) has. */
function first(
  span: OtlpSpan,
  keys: readonly string[],
  read: (v: AttrValue | undefined) => string | number | null,
): ReturnType<typeof read> {
  for (const k of keys) {
    const v = read(span.attributes[k]);
    if (v !== null) return v;
  }
  return null;
}

function kindOf(span: OtlpSpan): SpanKind {
  const a = span.attributes;
  const ours = a[OUR_ATTRIBUTES.kind];
  if (typeof ours === 'string' && (SPAN_KINDS as readonly string[]).includes(ours)) return ours as SpanKind;
  const isHandoff = /\bhandoff\b/i.test(span.name);
  const oi = typeof a['openinference.span.kind'] === 'string' ? OPENINFERENCE_KINDS[a['openinference.span.kind'].toUpperCase()] : undefined;
  if (oi) return oi === 'tool' && isHandoff ? 'handoff' : oi;
  if (Object.keys(a).some((k) => k.startsWith('mcp.')) || /^mcp\b/i.test(span.name)) return 'mcp';
  const op = typeof a['gen_ai.operation.name'] === 'string' ? GENAI_OPERATIONS[a['gen_ai.operation.name']] : undefined;
  if (op) return op === 'tool' && isHandoff ? 'handoff' : op;
  if (isHandoff) return 'handoff';
  if (/guardrail/i.test(span.name)) return 'guardrail';
  return 'other';
}

function linkOf(span: OtlpSpan): TraceLink | null {
  const read = (attrs: Attributes): TraceLink | null => {
    const ours = text(attrs[OUR_ATTRIBUTES.sessionId]);
    if (ours)
      return { sessionId: ours, branchId: text(attrs[OUR_ATTRIBUTES.branchId]), turnNumber: count(attrs[OUR_ATTRIBUTES.turnNumber]) };
    const conversation = text(attrs['gen_ai.conversation.id']) ?? text(attrs['session.id']);
    return conversation ? { sessionId: conversation } : null;
  };
  return read(span.attributes) ?? read(span.resource);
}

function errorOf(span: OtlpSpan): string | null {
  const exception = span.events.find((e) => e.name === 'exception');
  const fromEvent = exception ? (text(exception.attributes['exception.message']) ?? text(exception.attributes['exception.type'])) : null;
  const errorType = text(span.attributes['error.type']);
  if (span.status === 'error') return span.statusMessage ?? fromEvent ?? errorType ?? 'error';
  // `error.type` without an error status: GenAI's conventions set both, but a tracer that sets only the attribute
  // still means the step failed.
  return span.status === 'ok' ? null : errorType;
}

/** An OTLP span → the store's record. */
export function spanRecordOf(span: OtlpSpan, source: SpanSource): SpanRecord {
  const error = errorOf(span);
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    kind: kindOf(span),
    spanKind: span.spanKind,
    startUs: span.startUs,
    endUs: span.endUs,
    status: error !== null ? 'error' : span.status,
    error,
    model: first(span, ['gen_ai.response.model', 'gen_ai.request.model', 'llm.model_name'], text) as string | null,
    inputTokens: first(span, ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.token_count.prompt'], count) as number | null,
    outputTokens: first(span, ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens', 'llm.token_count.completion'], count) as
      number | null,
    cachedTokens: first(
      span,
      [
        'gen_ai.usage.cache_read.input_tokens',
        'gen_ai.usage.cache_read_input_tokens',
        // Sentry's GenAI spans (its Python and JS SDKs' OpenAI and Anthropic integrations).
        'gen_ai.usage.input_tokens.cached',
        'llm.token_count.prompt_details.cache_read',
      ],
      count,
    ) as number | null,
    reasoningTokens: first(
      span,
      [
        'gen_ai.usage.reasoning.output_tokens',
        'gen_ai.usage.reasoning_tokens',
        'gen_ai.usage.output_tokens.reasoning',
        'llm.token_count.completion_details.reasoning',
      ],
      count,
    ) as number | null,
    toolName: first(span, ['gen_ai.tool.name', 'tool.name', 'mcp.tool.name'], text) as string | null,
    agentName: first(span, ['gen_ai.agent.name', 'agent.name'], text) as string | null,
    link: linkOf(span),
    source,
    service: text(span.resource['service.name']),
    attributes: span.attributes,
    resource: span.resource,
    events: span.events,
    truncated: span.truncated,
    otlp: { scope: span.scope, status: span.status, statusMessage: span.statusMessage, kinds: span.kinds },
  };
}
