/**
 * AG-UI events in, run events out: each line a command prints (or each SSE `data:` field) is checked against
 * `@ag-ui/core`'s schemas and mapped onto the conversation view's run events (docs/agent-command.md §4). Invalid
 * lines are counted, never shown. The translator also keeps what decides the run's end: RUN_FINISHED / RUN_ERROR and
 * the usage the events reported.
 */
import type * as AgUiSchemas from '@ag-ui/core/schemas';
import { itemAddedEvent, type RunEvent, type RunUsageView } from '../../shared/protocol/runEvents';
import type { ReplayOutcome } from '../../shared/protocol/replay';
import type { ReplayReport } from '../replay/writtenCalls';

/** The CUSTOM event names of ours (docs/agent-command.md §4). */
export const USAGE_EVENT = 'agent-sessions.usage';
export const ITEM_EVENT = 'agent-sessions.item';
/** Spans of the run (docs/traces.md, "Sources"): the agents SDK's exported spans, or an OTLP JSON export. */
export const SPANS_EVENT = 'agent-sessions.spans';
export const OTLP_EVENT = 'agent-sessions.otlp';
/** The most spans one run may send; the rest are dropped (and counted), so a runaway command cannot fill memory. */
export const MAX_RUN_SPANS = 10_000;
/** What the command did with one tool call in a re-run (docs/agent-command.md §4): `{ callId, name, outcome, recordedCallId }`. */
export const TOOL_REPLAY_EVENT = 'agent-sessions.tool-replay';
/**
 * The most tool-replay reports one run may send (one per call: far more calls than a turn makes), and the longest
 * `callId`, `name` and `recordedCallId` in one. Reports past the count are dropped and counted; a report with a longer
 * field is invalid. So all reports of a run hold at most a few megabytes, whatever the command sends.
 */
export const MAX_REPLAY_REPORTS = 1_000;
export const MAX_REPLAY_REPORT_FIELD_CHARS = 512;
const REPLAY_OUTCOMES: readonly ReplayOutcome[] = ['replayed', 'live', 'unmatched'];

let eventSchema: typeof AgUiSchemas.EventSchema | undefined;

/**
 * AG-UI's event schemas (zod's): loaded on the first event, not with this module, so nothing before an agent's start
 * waits for them (issue 43: `agent-sessions run` compiled and ran them before spawning the agent, most of its start).
 * A run calls this once its agent is spawned, so they load while the agent starts and its first event does not wait.
 */
export function loadEventSchemas(): typeof AgUiSchemas.EventSchema {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  eventSchema ??= (require('@ag-ui/core/schemas') as typeof AgUiSchemas).EventSchema;
  return eventSchema;
}

type Emit = (event: RunEvent) => void;
/** A line or value that is not a valid AG-UI event: why, and its text. */
type Reject = (why: string, source: string) => void;

export class AgUiTranslator {
  /** RUN_FINISHED was seen. */
  finished = false;
  /** RUN_FINISHED's outcome was `cancelled`: the agent stopped the run itself (settled as Stop is). */
  cancelled = false;
  /** Events that came after the run's terminal event (RUN_FINISHED, RUN_ERROR): ignored, as AG-UI says. */
  afterEnd = 0;
  /** The first of them, for the log. */
  afterEndSample: string | undefined;
  /** RUN_ERROR's message and code, when one was seen. */
  error: { message: string; code?: string } | undefined;
  /** The usage the events reported (summed), or undefined when none did. */
  usage: RunUsageView | undefined;
  /** Valid events received. */
  valid = 0;
  /** Lines that were not valid AG-UI events (the caller quotes the first few, redacted). */
  invalid = 0;
  /** The SDK spans the run sent (`agent-sessions.spans`), at most `MAX_RUN_SPANS` with the OTLP ones. */
  readonly sdkSpans: unknown[] = [];
  /** The OTLP exports the run sent (`agent-sessions.otlp`). */
  readonly otlp: unknown[] = [];
  /** Spans beyond `MAX_RUN_SPANS`, dropped. */
  droppedSpans = 0;
  /** The command's tool-replay reports, in the order sent (at most `MAX_REPLAY_REPORTS`): its word, checked later. */
  readonly replayReports: ReplayReport[] = [];
  /** Tool-replay reports beyond `MAX_REPLAY_REPORTS`, dropped. */
  droppedReplayReports = 0;
  /** Tool-replay events whose value is not a report (ignored). */
  invalidReplayReports = 0;
  private readonly reportedCalls = new Map<string, ReplayReport>();
  private readonly toolCalls = new Map<string, { name: string; args: string; parentMessageId?: string }>();
  private readonly toolNames = new Map<string, string>();
  private readonly toolArguments = new Map<string, string>();

  constructor(
    private readonly runId: string,
    private readonly emit: Emit,
    private readonly onReject: Reject = () => undefined,
  ) {}

  /** One line of newline-delimited JSON (blank lines are ignored). */
  line(text: string): void {
    const trimmed = text.trim();
    if (trimmed === '') return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      this.reject(trimmed, 'not JSON');
      return;
    }
    this.event(value, trimmed);
  }

  /** One decoded event (from a JSON line or an SSE data field). */
  event(value: unknown, source = JSON.stringify(value)): void {
    const parsed = loadEventSchemas().safeParse(value);
    if (!parsed.success) {
      const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
      this.reject(source, typeof type === 'string' ? `not a valid ${type} event` : 'not an AG-UI event');
      return;
    }
    this.valid++;
    this.apply(parsed.data as AgUiEvent);
  }

  private reject(source: string, why: string): void {
    this.invalid++;
    this.onReject(why, source);
  }

  /** Whether the run's terminal event was seen (nothing but one RUN_ERROR may follow RUN_FINISHED). */
  private get ended(): boolean {
    return this.finished || this.error !== undefined;
  }

  private apply(e: AgUiEvent): void {
    const runId = this.runId;
    // AG-UI 1.0: RUN_FINISHED and RUN_ERROR end the run and nothing may follow, except one RUN_ERROR after
    // RUN_FINISHED (a failure that surfaced after the run reported success). What follows is ignored and reported.
    if (this.ended && !(e.type === 'RUN_ERROR' && this.error === undefined)) {
      this.afterEnd++;
      this.afterEndSample ??= e.type;
      return;
    }
    switch (e.type) {
      case 'TEXT_MESSAGE_CONTENT':
        if (e.delta) this.emit({ kind: 'text/delta', runId, delta: e.delta });
        return;
      case 'TEXT_MESSAGE_CHUNK':
        if (typeof e.delta === 'string' && e.delta !== '' && (e.role === undefined || e.role === 'assistant'))
          this.emit({ kind: 'text/delta', runId, delta: e.delta });
        return;
      case 'TOOL_CALL_START':
        this.toolCalls.set(e.toolCallId, { name: e.toolCallName, args: '' });
        return;
      case 'TOOL_CALL_ARGS': {
        const call = this.toolCalls.get(e.toolCallId);
        if (call) call.args += e.delta;
        return;
      }
      case 'TOOL_CALL_CHUNK': {
        if (!e.toolCallId) return;
        const call = this.toolCalls.get(e.toolCallId) ?? { name: e.toolCallName ?? 'tool', args: '' };
        if (e.toolCallName) call.name = e.toolCallName;
        call.args += e.delta ?? '';
        this.toolCalls.set(e.toolCallId, call);
        return;
      }
      case 'TOOL_CALL_END': {
        const call = this.toolCalls.get(e.toolCallId);
        if (!call) return;
        this.toolCalls.delete(e.toolCallId);
        this.toolNames.set(e.toolCallId, call.name);
        this.toolArguments.set(e.toolCallId, call.args || '{}');
        this.emit({ kind: 'tool/called', runId, callId: e.toolCallId, name: call.name, arguments: call.args || '{}' });
        return;
      }
      case 'TOOL_CALL_RESULT': {
        // The command's report, when it came first: shown as its word; the outcome carries the settlement's marks.
        const reported = this.reportedCalls.get(e.toolCallId);
        this.emit({
          kind: 'tool/output',
          runId,
          callId: e.toolCallId,
          name: this.toolNames.get(e.toolCallId) ?? 'tool',
          output: typeof e.content === 'string' ? e.content : JSON.stringify(e.content),
          ...(reported ? { replay: { outcome: reported.outcome, recordedCallId: reported.recordedCallId } } : {}),
        });
        return;
      }
      case 'REASONING_MESSAGE_CONTENT':
        if (e.delta) this.emit({ kind: 'reasoning/delta', runId, delta: e.delta });
        return;
      case 'REASONING_MESSAGE_CHUNK':
        if (typeof e.delta === 'string' && e.delta !== '') this.emit({ kind: 'reasoning/delta', runId, delta: e.delta });
        return;
      case 'RUN_FINISHED':
        this.finished = true;
        if (e.outcome?.type === 'cancelled') this.cancelled = true;
        if (Array.isArray(e.usage) && e.usage.length > 0) this.addUsage(fromTokenUsage(e.usage));
        return;
      case 'RUN_ERROR':
        this.error = { message: e.message, ...(e.code ? { code: e.code } : {}) };
        if (Array.isArray(e.usage) && e.usage.length > 0) this.addUsage(fromTokenUsage(e.usage));
        return;
      case 'CUSTOM':
        if (e.name === USAGE_EVENT) {
          const usage = usageFromCustom(e.value);
          if (usage) this.usage = usage;
        } else if (e.name === ITEM_EVENT && typeof e.value === 'object' && e.value !== null) {
          this.emit(itemAddedEvent(runId, e.value as Record<string, unknown>));
        } else if (e.name === SPANS_EVENT) {
          // `{ "spans": [...] }`, an array of spans, or one span.
          const v = e.value as { spans?: unknown } | unknown[] | null;
          const spans = Array.isArray(v) ? v : v && typeof v === 'object' && Array.isArray(v.spans) ? v.spans : v ? [v] : [];
          for (const span of spans) {
            if (this.sdkSpans.length + this.otlp.length >= MAX_RUN_SPANS) this.droppedSpans++;
            else this.sdkSpans.push(span);
          }
        } else if (e.name === OTLP_EVENT && typeof e.value === 'object' && e.value !== null) {
          if (this.sdkSpans.length + this.otlp.length >= MAX_RUN_SPANS) this.droppedSpans++;
          else this.otlp.push(e.value);
        } else if (e.name === TOOL_REPLAY_EVENT) {
          const report = replayReport(e.value);
          if (!report) this.invalidReplayReports++;
          else if (this.replayReports.length >= MAX_REPLAY_REPORTS) this.droppedReplayReports++;
          else {
            const args = this.toolArguments.get(report.callId);
            if (args !== undefined) report.arguments = args;
            this.replayReports.push(report);
            if (!this.reportedCalls.has(report.callId)) this.reportedCalls.set(report.callId, report);
          }
        }
        return;
      default:
        // Steps, reasoning spans' starts and ends, encrypted reasoning, subagents' starts and ends (their content is
        // attributed by subagentRunId and shown with the run's), state, activity, RAW: valid, and nothing to show.
        return;
    }
  }

  private addUsage(u: RunUsageView): void {
    this.usage = this.usage ? sumUsage(this.usage, u) : u;
  }
}

/** The fields of the AG-UI events we read (the schema has checked them). */
type AgUiEvent =
  | { type: 'TEXT_MESSAGE_CONTENT'; delta: string }
  | { type: 'TEXT_MESSAGE_CHUNK'; delta?: string; role?: string }
  | { type: 'TOOL_CALL_START'; toolCallId: string; toolCallName: string }
  | { type: 'TOOL_CALL_ARGS'; toolCallId: string; delta: string }
  | { type: 'TOOL_CALL_CHUNK'; toolCallId?: string; toolCallName?: string; delta?: string }
  | { type: 'TOOL_CALL_END'; toolCallId: string }
  | { type: 'TOOL_CALL_RESULT'; toolCallId: string; content: unknown }
  | { type: 'REASONING_MESSAGE_CONTENT'; delta: string }
  | { type: 'REASONING_MESSAGE_CHUNK'; delta?: string }
  | { type: 'RUN_FINISHED'; usage?: TokenUsage[]; outcome?: { type: string } }
  | { type: 'RUN_ERROR'; message: string; code?: string; usage?: TokenUsage[] }
  | { type: 'CUSTOM'; name: string; value: unknown }
  | { type: 'OTHER' };

interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

/** AG-UI's TokenUsage entries (one per model call or per model) as one run's usage. */
function fromTokenUsage(entries: readonly TokenUsage[]): RunUsageView {
  const sum = (key: keyof TokenUsage) => entries.reduce((n, e) => n + (e[key] ?? 0), 0);
  const input = sum('inputTokens');
  const output = sum('outputTokens');
  return {
    requests: entries.length,
    inputTokens: input,
    outputTokens: output,
    totalTokens: entries.reduce((n, e) => n + (e.totalTokens ?? (e.inputTokens ?? 0) + (e.outputTokens ?? 0)), 0),
    cachedTokens: sum('cachedInputTokens'),
    reasoningTokens: sum('reasoningTokens'),
  };
}

/** A tool-replay event's value as a report, or undefined when it is not one (docs/agent-command.md §4). */
export function replayReport(value: unknown): ReplayReport | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const field = (x: unknown) => typeof x === 'string' && x !== '' && x.length <= MAX_REPLAY_REPORT_FIELD_CHARS;
  if (!field(v.callId) || !field(v.name) || !REPLAY_OUTCOMES.includes(v.outcome as ReplayOutcome)) return undefined;
  const recorded = v.recordedCallId ?? null;
  if (recorded !== null && !field(recorded)) return undefined;
  return {
    callId: v.callId as string,
    name: v.name as string,
    outcome: v.outcome as ReplayOutcome,
    recordedCallId: recorded as string | null,
  };
}

function usageFromCustom(value: unknown): RunUsageView | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const n = (k: string) => (typeof v[k] === 'number' && Number.isFinite(v[k]) ? (v[k] as number) : 0);
  return {
    requests: n('requests'),
    inputTokens: n('inputTokens'),
    outputTokens: n('outputTokens'),
    totalTokens: n('totalTokens') || n('inputTokens') + n('outputTokens'),
    cachedTokens: n('cachedTokens'),
    reasoningTokens: n('reasoningTokens'),
  };
}

function sumUsage(a: RunUsageView, b: RunUsageView): RunUsageView {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}
