/**
 * An agents SDK span (the shape both SDKs export: `span.export()` in Python, `span.toJSON()` in JS — id, trace_id,
 * parent_id, started_at, ended_at, span_data, error) → a record of the trace store. Used for the extension's own runs
 * (runTracing.ts) and for the spans an agent command sends (command/commandSpans.ts). Loads no SDK, so the CLI and
 * the command runner can bundle it.
 *
 * Kept from each span: its timing, parent, error, and what the timeline shows (the agent, the model and usage of a
 * model request, the tool, the handoff's agents, a guardrail's verdict), and a model request's input when the span
 * carries it (a generation span's `input`, a response span's `_input` or `input`, with `instructions` and `tools` when
 * its sender added them): the Context tab's recorded input (docs/context.md), bounded by `inputAttributes`. Outputs
 * are not kept: they are in the session file already.
 */
import type { SpanRecord, SpanSource, TraceLink } from '../store/traces/spanRecord';
import type { Attributes } from '../store/traces/otlpSpans';
import { inputAttributes } from '../store/traces/recordedInput';

/** The exported form of an SDK span, as both SDKs write it. */
export interface SdkSpanJson {
  id: string;
  trace_id: string;
  parent_id?: string | null;
  started_at?: string | null;
  ended_at?: string | null;
  span_data?: Record<string, unknown> | null;
  error?: { message?: string; data?: unknown } | null;
}

/** Whether a value has the exported span's shape (the fields the conversion needs). */
export function isSdkSpanJson(v: unknown): v is SdkSpanJson {
  const o = v as Partial<SdkSpanJson> | null;
  return typeof o === 'object' && o !== null && typeof o.id === 'string' && typeof o.trace_id === 'string';
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

const micros = (iso: string | null | undefined, fallback: number): number => {
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

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** A model request's input as the span carries it (items, or one string), as the recorded-input attributes; none without one. */
function recordedInput(input: unknown, data: Record<string, unknown>): Attributes {
  const items = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : null;
  if (!items) return {};
  return inputAttributes(items, text(data.instructions), Array.isArray(data.tools) ? data.tools : null);
}

/** An SDK span → a record of the trace store, linked to the run's session, branch and turn. */
export function sdkSpanRecord(span: SdkSpanJson, link: TraceLink, source: SpanSource = 'extension'): SpanRecord {
  const data = (span.span_data ?? {}) as Record<string, unknown> & { type?: unknown };
  const type = typeof data.type === 'string' ? data.type : 'custom';
  const now = Date.now() * 1000;
  const startUs = micros(span.started_at, now);
  const endUs = Math.max(startUs, micros(span.ended_at, startUs));
  const attributes: Attributes = {
    'openai.agents.span_type': type,
    'openai.agents.trace_id': span.trace_id,
    'openai.agents.span_id': span.id,
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
  let name: string = text(data.name) ?? type;
  let error = span.error ? (text(span.error.message) ?? 'error') : null;
  const dataName = text(data.name);
  switch (type) {
    case 'agent':
      kind = 'agent';
      name = `agent ${dataName ?? '?'}`;
      base.agentName = dataName;
      break;
    case 'response':
      kind = 'model';
      // The live span holds the response (`_response`); an exported one has what its sender added (`model`, `usage`).
      Object.assign(base, responseFacts(data._response ?? data.response ?? { model: data.model, usage: data.usage }));
      name = base.model ? `response ${base.model}` : 'response';
      if (text(data.response_id)) attributes['gen_ai.response.id'] = text(data.response_id);
      Object.assign(attributes, recordedInput(data._input ?? data.input, data));
      break;
    case 'generation': {
      kind = 'model';
      const usage = (data.usage ?? {}) as Record<string, unknown>;
      base.model = text(data.model);
      base.inputTokens = num(usage.input_tokens);
      base.outputTokens = num(usage.output_tokens);
      name = base.model ? `generation ${base.model}` : 'generation';
      Object.assign(attributes, recordedInput(data.input, data));
      break;
    }
    case 'function':
      kind = data.mcp_data ? 'mcp' : 'tool';
      name = dataName ?? 'function';
      base.toolName = dataName;
      // What replay did with the call (replay/replayedTools.ts): `replayed <recorded call id>`, `live`, `unmatched`.
      if (text(data.agent_sessions_replay)) attributes['agent_sessions.replay'] = text(data.agent_sessions_replay);
      break;
    case 'handoff': {
      kind = 'handoff';
      const from = text(data.from_agent);
      const to = text(data.to_agent);
      name = `handoff ${from ?? '?'} → ${to ?? '?'}`;
      base.agentName = to;
      if (from) attributes['handoff.from_agent'] = from;
      if (to) attributes['handoff.to_agent'] = to;
      break;
    }
    case 'guardrail':
      kind = 'guardrail';
      name = dataName ?? 'guardrail';
      attributes['guardrail.triggered'] = data.triggered === true;
      // A tripped guardrail stops the run: the timeline marks it as the step that failed.
      if (data.triggered === true) error ??= `guardrail ${name} tripped`;
      break;
    case 'mcp_tools':
      kind = 'mcp';
      name = `list tools ${text(data.server) ?? ''}`.trim();
      break;
    case 'transcription':
    case 'speech':
    case 'speech_group':
      // Voice pipelines: the model when the SDK says which.
      base.model = text(data.model);
      break;
    case 'turn':
      // The SDK's "turn" is one pass of its loop (a model request and the tools it called), not a conversation's
      // turn: "step" keeps the timeline from calling two different things turns.
      name = `step ${num(data.turn) ?? '?'} (${text(data.agent_name) ?? '?'})`;
      base.agentName = text(data.agent_name);
      if (num(data.turn) !== null) attributes['openai.agents.turn'] = num(data.turn);
      break;
    default:
      // custom, task and any type a newer SDK adds: its name (or its type) as it is.
      break;
  }
  return {
    traceId: otlpTraceId(span.trace_id),
    spanId: otlpSpanId(span.id),
    parentSpanId: span.parent_id ? otlpSpanId(span.parent_id) : null,
    name,
    kind,
    spanKind: kind === 'model' ? 3 : 1,
    startUs,
    endUs,
    status: error ? 'error' : 'ok',
    error,
    ...base,
    link,
    source,
    service: source === 'extension' ? 'agent-session-inspector' : null,
    attributes,
    resource: { 'service.name': 'agent-session-inspector' },
    events: [],
    truncated: false,
  };
}
