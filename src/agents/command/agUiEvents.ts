/**
 * AG-UI events in, run events out: each line a command prints (or each SSE `data:` field) is checked against
 * `@ag-ui/core`'s schemas (its optional fields sent as null taken as absent, as AG-UI 1.0 reads them) and mapped onto
 * the conversation view's run events (docs/agent-command.md §4). Invalid lines are counted, never shown. The
 * translator also keeps what decides the run's end: RUN_FINISHED / RUN_ERROR and the usage the events reported; what
 * it keeps of a run (tool calls' arguments, spans, text held back) is bounded (commandLimits.ts).
 */
import type * as AgUiCore from '@ag-ui/core';
import type * as AgUiSchemas from '@ag-ui/core/schemas';
import { itemAddedEvent, type RunEvent, type RunUsageView } from '../../shared/protocol/runEvents';
import type { ReplayOutcome } from '../../shared/protocol/replay';
import type { ReplayReport } from '../replay/writtenCalls';
import { MAX_HELD_TEXT_CHARS, MAX_RUN_SPAN_CHARS, MAX_RUN_TOOL_CALL_CHARS, MAX_TOOL_CALL_ARGS_CHARS } from './commandLimits';

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
let omitNulls: ((value: unknown) => unknown) | undefined;

/**
 * AG-UI's event schemas (zod's): loaded on the first event, not with this module, so nothing before an agent's start
 * waits for them (issue 43: `agent-sessions run` compiled and ran them before spawning the agent, most of its start).
 * A run calls this once its agent is spawned, so they load while the agent starts and its first event does not wait.
 * `@ag-ui/core`'s own entry (for `omitOptionalNulls`) loads with them: it holds no schema and no zod, and is in the
 * same vendor bundle (scripts/vendorBundles.mjs).
 */
export function loadEventSchemas(): typeof AgUiSchemas.EventSchema {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  eventSchema ??= (require('@ag-ui/core/schemas') as typeof AgUiSchemas).EventSchema;
  if (!omitNulls) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const core = require('@ag-ui/core') as typeof AgUiCore;
    omitNulls = (value) => core.omitOptionalNulls(value, 'Event');
  }
  return eventSchema;
}

/**
 * An event as AG-UI 1.0 reads it: a whole optional field sent as `null` is absent (the Python SDK's `model_dump()`
 * without `exclude_none`, the .NET adapter's `parentMessageId: null`). The schemas reject such a null, and one on
 * RUN_FINISHED once dropped the event, failed the run and deleted the agent's answer.
 */
function withoutOptionalNulls(value: unknown): unknown {
  return omitNulls ? omitNulls(value) : value;
}

type Emit = (event: RunEvent) => void;
/** A line or value that is not a valid AG-UI event: why, and its text. */
type Reject = (why: string, source: string) => void;

/** A tool call the run holds: begun (by TOOL_CALL_START or a first TOOL_CALL_CHUNK) and not yet ended. */
interface OpenCall {
  name: string;
  /** The arguments kept so far, at most `MAX_TOOL_CALL_ARGS_CHARS` (and what the run's bound left). */
  args: string;
  /** Characters of arguments past a bound, not kept. */
  cut: number;
  /** Which bound cut them. */
  cutBy?: 'call' | 'run';
}

/** A text message of the run, as the live view shows it (only an assistant's; one at a time: see `text`). */
interface OpenMessage {
  /** The role its start gave (`assistant` when none): only an assistant's text is the answer. */
  assistant: boolean;
  /** Its text that came while another message was shown, waiting for that one's end. */
  held: string[];
  heldSize: number;
  /** Its end came (TEXT_MESSAGE_END, or the chunk sequence it was sent in ended). */
  ended: boolean;
}

/** Between two messages' text in the live view: a paragraph break, so the answer's messages never run together. */
const MESSAGE_BREAK = '\n\n';
/**
 * What one call or message the run holds costs besides its text, as counted against its bound: a run of many tiny
 * calls that are never answered (or messages never ended) must meet the bound too, not only one of a few large ones.
 */
const ENTRY_CHARS = 64;

export class AgUiTranslator {
  /** RUN_FINISHED was seen. */
  finished = false;
  /** RUN_FINISHED's outcome was `cancelled`: the agent stopped the run itself (settled as Stop is). */
  cancelled = false;
  /**
   * RUN_FINISHED's outcome was `interrupt`: the run is paused, waiting for something outside it (an approval, a
   * value). What each interrupt says (its message, else its reason), with the tool call it concerns.
   */
  interrupts: { text: string; toolCallId?: string }[] | undefined;
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
  /** Spans beyond `MAX_RUN_SPANS` or `MAX_RUN_SPAN_CHARS`, dropped. */
  droppedSpans = 0;
  /** The command's tool-replay reports, in the order sent (at most `MAX_REPLAY_REPORTS`): its word, checked later. */
  readonly replayReports: ReplayReport[] = [];
  /** Tool-replay reports beyond `MAX_REPLAY_REPORTS`, dropped. */
  droppedReplayReports = 0;
  /** Tool-replay events whose value is not a report (ignored). */
  invalidReplayReports = 0;
  /** Tool calls whose arguments were cut at a bound (`MAX_TOOL_CALL_ARGS_CHARS`, `MAX_RUN_TOOL_CALL_CHARS`). */
  cutToolCalls = 0;
  /** Tool calls begun past `MAX_RUN_TOOL_CALL_CHARS`: not shown. */
  droppedToolCalls = 0;
  private readonly reportedCalls = new Map<string, ReplayReport>();
  private readonly toolCalls = new Map<string, OpenCall>();
  /** The call a TOOL_CALL_CHUNK sequence is streaming: continued by a chunk without an id, ended by any other event. */
  private chunkCall: string | undefined;
  /** Ended calls not yet answered: their name (for the output) and arguments (for a report), until TOOL_CALL_RESULT. */
  private readonly endedCalls = new Map<string, { name: string; args: string }>();
  /** Characters of the ids, names and arguments in `toolCalls` and `endedCalls`, bounded by `MAX_RUN_TOOL_CALL_CHARS`. */
  private toolChars = 0;
  /** Characters of the span values kept, bounded by `MAX_RUN_SPAN_CHARS`. */
  private spanChars = 0;
  /** The run's text messages by id, while they are open or hold text ('' for text sent without an id). */
  private readonly messages = new Map<string, OpenMessage>();
  /** Characters of the ids and held text in `messages`, bounded by `MAX_HELD_TEXT_CHARS`. */
  private textChars = 0;
  /** The message whose text the live view is showing now. */
  private shownMessage: string | undefined;
  /** The message whose text was shown last (a break goes before another one's). */
  private lastShown: string | undefined;
  /** The message a TEXT_MESSAGE_CHUNK sequence is streaming: continued by a chunk without an id. */
  private chunkMessage: string | undefined;
  private endHeard = false;

  constructor(
    private readonly runId: string,
    private readonly emit: Emit,
    private readonly onReject: Reject = () => undefined,
    /** Called once, when the run's terminal event (RUN_FINISHED or RUN_ERROR) has been read. */
    private readonly onEnd: () => void = () => undefined,
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
    // Loads `omitNulls` too.
    const schema = loadEventSchemas();
    const parsed = schema.safeParse(withoutOptionalNulls(value));
    if (!parsed.success) {
      const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
      this.reject(source, typeof type === 'string' ? `not a valid ${type} event` : 'not an AG-UI event');
      return;
    }
    this.valid++;
    this.apply(parsed.data as AgUiEvent);
  }

  /**
   * The event stream ended (the process's stdout closed, the HTTP stream ended): a call streamed in TOOL_CALL_CHUNKs
   * ends here if nothing ended it before, and the text held back for the view is let out.
   */
  end(): void {
    this.endChunkCall();
    this.endChunkMessage();
    this.releaseAllText();
  }

  private reject(source: string, why: string): void {
    this.invalid++;
    this.onReject(why, source);
  }

  /** Whether the run's terminal event was seen (nothing but one RUN_ERROR may follow RUN_FINISHED). */
  get ended(): boolean {
    return this.finished || this.error !== undefined;
  }

  private apply(e: AgUiEvent): void {
    const runId = this.runId;
    // AG-UI 1.0: RUN_FINISHED and RUN_ERROR end the run and nothing may follow, except one RUN_ERROR right after
    // RUN_FINISHED (a failure that surfaced after the run reported success). What follows is ignored and reported: a
    // RUN_ERROR after anything else ignored (a second run's RUN_STARTED, its text) is that other run's, not ours.
    if (this.ended && !(e.type === 'RUN_ERROR' && this.error === undefined && this.afterEnd === 0)) {
      this.afterEnd++;
      this.afterEndSample ??= e.type;
      return;
    }
    // As AG-UI's reference client reads chunks: a chunk sequence ends when any other event arrives.
    if (e.type !== 'TOOL_CALL_CHUNK') this.endChunkCall();
    if (e.type !== 'TEXT_MESSAGE_CHUNK') this.endChunkMessage();
    switch (e.type) {
      case 'TEXT_MESSAGE_START':
        this.openMessage(e.messageId, e.role);
        return;
      case 'TEXT_MESSAGE_CONTENT':
        if (e.delta) this.text(e.messageId, e.delta);
        return;
      case 'TEXT_MESSAGE_END':
        this.endMessage(e.messageId);
        return;
      case 'TEXT_MESSAGE_CHUNK': {
        // A chunk with a new id starts a message (its role, assistant when none); one without continues the current.
        const id = e.messageId ?? this.chunkMessage ?? '';
        if (id !== this.chunkMessage) {
          this.endChunkMessage();
          this.chunkMessage = id;
          if (!this.messages.has(id)) this.openMessage(id, e.role);
        }
        if (typeof e.delta === 'string' && e.delta !== '') this.text(id, e.delta);
        return;
      }
      case 'TOOL_CALL_START':
        this.beginCall(e.toolCallId, e.toolCallName);
        return;
      case 'TOOL_CALL_ARGS': {
        const call = this.toolCalls.get(e.toolCallId);
        if (call) this.addArgs(call, e.delta);
        return;
      }
      case 'TOOL_CALL_CHUNK': {
        // As AG-UI's reference client: a chunk with a new id begins a call (and ends the one streaming); a chunk
        // without an id continues the call streaming; the call ends when another event arrives or the stream ends.
        const id = e.toolCallId ?? this.chunkCall;
        if (id === undefined) return;
        if (id !== this.chunkCall) {
          this.endChunkCall();
          if (!this.toolCalls.has(id)) {
            if (!this.beginCall(id, e.toolCallName ?? 'tool')) return;
            this.chunkCall = id;
          }
        }
        const call = this.toolCalls.get(id);
        if (!call) return;
        if (e.toolCallName && call.name !== e.toolCallName && id === this.chunkCall) {
          this.toolChars += e.toolCallName.length - call.name.length;
          call.name = e.toolCallName;
        }
        if (e.delta) this.addArgs(call, e.delta);
        return;
      }
      case 'TOOL_CALL_END':
        this.endCall(e.toolCallId);
        return;
      case 'TOOL_CALL_RESULT': {
        // The command's report, when it came first: shown as its word; the outcome carries the settlement's marks.
        const reported = this.reportedCalls.get(e.toolCallId);
        const ended = this.endedCalls.get(e.toolCallId);
        // Answered: nothing more is needed of the call, so what it held is let go (the run's bound counts only calls
        // still waiting for their output).
        if (ended) {
          this.endedCalls.delete(e.toolCallId);
          this.toolChars -= callChars(e.toolCallId, ended.name, ended.args);
        }
        this.emit({
          kind: 'tool/output',
          runId,
          callId: e.toolCallId,
          name: ended?.name ?? 'tool',
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
        if (e.outcome?.type === 'interrupt') this.interrupts = (e.outcome.interrupts ?? []).map(interruptText);
        if (Array.isArray(e.usage) && e.usage.length > 0) this.addUsage(fromTokenUsage(e.usage));
        this.runEnded();
        return;
      case 'RUN_ERROR':
        this.error = { message: e.message, ...(e.code ? { code: e.code } : {}) };
        if (Array.isArray(e.usage) && e.usage.length > 0) this.addUsage(fromTokenUsage(e.usage));
        this.runEnded();
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
          for (const span of spans) this.keepSpan(this.sdkSpans, span);
        } else if (e.name === OTLP_EVENT && typeof e.value === 'object' && e.value !== null) {
          this.keepSpan(this.otlp, e.value);
        } else if (e.name === TOOL_REPLAY_EVENT) {
          const report = replayReport(e.value);
          if (!report) this.invalidReplayReports++;
          else if (this.replayReports.length >= MAX_REPLAY_REPORTS) this.droppedReplayReports++;
          else {
            const args = this.endedCalls.get(report.callId)?.args;
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

  /** The run's terminal event was read: what is held back goes out now (nothing of the run follows), once. */
  private runEnded(): void {
    this.releaseAllText();
    if (this.endHeard) return;
    this.endHeard = true;
    this.onEnd();
  }

  /** A span value kept for the trace store, within the run's count and size bounds (else dropped and counted). */
  private keepSpan(into: unknown[], value: unknown): void {
    if (this.sdkSpans.length + this.otlp.length >= MAX_RUN_SPANS) {
      this.droppedSpans++;
      return;
    }
    // Its size as the text it came in: the memory a run's spans hold grows with it, whatever their count.
    const size = JSON.stringify(value)?.length ?? 0;
    if (this.spanChars + size > MAX_RUN_SPAN_CHARS) {
      this.droppedSpans++;
      return;
    }
    this.spanChars += size;
    into.push(value);
  }

  /** Begins a call; false (and counted) when its id and name do not fit the run's bound. */
  private beginCall(id: string, name: string): boolean {
    const previous = this.toolCalls.get(id);
    if (previous) this.toolChars -= callChars(id, previous.name, previous.args);
    if (this.toolChars + callChars(id, name, '') > MAX_RUN_TOOL_CALL_CHARS) {
      this.toolCalls.delete(id);
      this.droppedToolCalls++;
      return false;
    }
    this.toolChars += callChars(id, name, '');
    this.toolCalls.set(id, { name, args: '', cut: 0 });
    return true;
  }

  /** Arguments added to a call, as far as its bound and the run's allow; the rest is counted, not kept. */
  private addArgs(call: OpenCall, delta: string): void {
    const room = Math.min(MAX_TOOL_CALL_ARGS_CHARS - call.args.length, MAX_RUN_TOOL_CALL_CHARS - this.toolChars);
    // A copy, not a slice: V8's slice of a string keeps the whole string alive, so a 15 Mi delta cut to what fits
    // would hold its 15 Mi for as long as the call is kept.
    const kept = delta.length <= room ? delta : copyOf(delta.slice(0, Math.max(0, room)));
    if (kept.length < delta.length) {
      if (call.cut === 0) this.cutToolCalls++;
      call.cutBy ??= call.args.length + kept.length >= MAX_TOOL_CALL_ARGS_CHARS ? 'call' : 'run';
      call.cut += delta.length - kept.length;
    }
    if (kept === '') return;
    call.args += kept;
    this.toolChars += kept.length;
  }

  private endCall(id: string): void {
    const call = this.toolCalls.get(id);
    if (!call) return;
    this.toolCalls.delete(id);
    if (this.chunkCall === id) this.chunkCall = undefined;
    // Kept until its output comes: its name names the output, its arguments go with a report of it.
    const prior = this.endedCalls.get(id);
    if (prior) this.toolChars -= callChars(id, prior.name, prior.args);
    this.endedCalls.set(id, { name: call.name, args: call.args || '{}' });
    this.toolChars += callChars(id, call.name, call.args || '{}') - callChars(id, call.name, call.args);
    const shown =
      call.cut > 0
        ? `${call.args}… [${call.cut.toLocaleString('en-US')} more characters of the arguments were not kept: ` +
          `${call.cutBy === 'call' ? `a call keeps ${MAX_TOOL_CALL_ARGS_CHARS.toLocaleString('en-US')}` : `the run's calls keep ${MAX_RUN_TOOL_CALL_CHARS.toLocaleString('en-US')} together`}]`
        : call.args || '{}';
    this.emit({ kind: 'tool/called', runId: this.runId, callId: id, name: call.name, arguments: shown });
  }

  /** The call a TOOL_CALL_CHUNK sequence was streaming ends (shown with its arguments). */
  private endChunkCall(): void {
    if (this.chunkCall === undefined) return;
    const id = this.chunkCall;
    this.chunkCall = undefined;
    this.endCall(id);
  }

  private endChunkMessage(): void {
    if (this.chunkMessage === undefined) return;
    const id = this.chunkMessage;
    this.chunkMessage = undefined;
    this.endMessage(id);
  }

  /** A message begins: only an assistant's text is shown (a user message echoed, a system note are not the answer). */
  private openMessage(id: string, role: string | undefined): void {
    const existing = this.messages.get(id);
    if (existing) {
      existing.assistant = role === undefined || role === 'assistant';
      existing.ended = false;
      return;
    }
    // Past the bound its id is not kept: its text is then shown as text of an unannounced message is.
    if (this.textChars + id.length + ENTRY_CHARS > MAX_HELD_TEXT_CHARS) return;
    this.textChars += id.length + ENTRY_CHARS;
    this.messages.set(id, { assistant: role === undefined || role === 'assistant', held: [], heldSize: 0, ended: false });
  }

  /**
   * Text of message `id`. One message is shown at a time: text of another assistant message that streams meanwhile
   * waits for the shown one's end (up to `MAX_HELD_TEXT_CHARS`), and a break goes between two messages' text. Text of
   * a message whose start never came is shown as an assistant's (AG-UI's reference client would refuse it).
   */
  private text(id: string, delta: string): void {
    const message = this.messages.get(id);
    if (message && !message.assistant) return;
    if (this.shownMessage === undefined || this.shownMessage === id || !message) {
      if (message) this.shownMessage = id;
      this.show(id, delta);
      return;
    }
    if (this.textChars + delta.length > MAX_HELD_TEXT_CHARS) {
      // Bounded: what waited is shown now, after a break, rather than held further.
      this.showHeld(id, message);
      this.show(id, delta);
      return;
    }
    message.held.push(delta);
    message.heldSize += delta.length;
    this.textChars += delta.length;
  }

  private show(id: string, delta: string): void {
    if (this.lastShown !== undefined && this.lastShown !== id) this.emit({ kind: 'text/delta', runId: this.runId, delta: MESSAGE_BREAK });
    this.lastShown = id;
    this.emit({ kind: 'text/delta', runId: this.runId, delta });
  }

  private showHeld(id: string, message: OpenMessage): void {
    if (message.heldSize === 0) return;
    const text = message.held.join('');
    this.textChars -= message.heldSize;
    message.held = [];
    message.heldSize = 0;
    this.show(id, text);
  }

  private endMessage(id: string): void {
    const message = this.messages.get(id);
    if (!message) return;
    message.ended = true;
    if (this.shownMessage !== id) {
      this.forget(id, message);
      return;
    }
    this.shownMessage = undefined;
    this.forget(id, message);
    // The next message that waited is shown: what it held, then (if still open) its text as it comes.
    for (const [next, m] of this.messages) {
      if (!m.assistant || m.heldSize === 0) continue;
      this.showHeld(next, m);
      if (!m.ended) {
        this.shownMessage = next;
        return;
      }
      this.forget(next, m);
    }
  }

  /** An ended message with nothing held is let go (its id no longer counts). */
  private forget(id: string, message: OpenMessage): void {
    if (!message.ended || message.heldSize > 0) return;
    this.messages.delete(id);
    this.textChars -= id.length + ENTRY_CHARS;
  }

  /** Everything held is shown, in the order the messages began (the run or its stream ended). */
  private releaseAllText(): void {
    if (this.shownMessage !== undefined) {
      const shown = this.messages.get(this.shownMessage);
      this.shownMessage = undefined;
      if (shown) shown.ended = true;
    }
    for (const [id, m] of [...this.messages]) {
      if (m.assistant) this.showHeld(id, m);
      m.ended = true;
      this.forget(id, m);
    }
  }

  private addUsage(u: RunUsageView): void {
    this.usage = this.usage ? sumUsage(this.usage, u) : u;
  }
}

/** A string that holds only its own characters (exactly: UTF-16 code units, lone surrogates too). */
function copyOf(text: string): string {
  return text === '' ? '' : Buffer.from(text, 'utf16le').toString('utf16le');
}

/** What a call counts against `MAX_RUN_TOOL_CALL_CHARS`: its id, name and arguments, and the entry itself. */
function callChars(id: string, name: string, args: string): number {
  return id.length + name.length + args.length + ENTRY_CHARS;
}

/** What one interrupt of a RUN_FINISHED `interrupt` outcome says: its message (else its reason), and its call. */
function interruptText(i: { message?: string; reason?: string; toolCallId?: string }): { text: string; toolCallId?: string } {
  const text = i.message ?? i.reason ?? 'input';
  return { text: text.length > 500 ? `${text.slice(0, 500)}…` : text, ...(i.toolCallId ? { toolCallId: i.toolCallId } : {}) };
}

/** The fields of the AG-UI events we read (the schema has checked them). */
type AgUiEvent =
  | { type: 'TEXT_MESSAGE_START'; messageId: string; role?: string }
  | { type: 'TEXT_MESSAGE_CONTENT'; messageId: string; delta: string }
  | { type: 'TEXT_MESSAGE_END'; messageId: string }
  | { type: 'TEXT_MESSAGE_CHUNK'; messageId?: string; delta?: string; role?: string }
  | { type: 'TOOL_CALL_START'; toolCallId: string; toolCallName: string }
  | { type: 'TOOL_CALL_ARGS'; toolCallId: string; delta: string }
  | { type: 'TOOL_CALL_CHUNK'; toolCallId?: string; toolCallName?: string; delta?: string }
  | { type: 'TOOL_CALL_END'; toolCallId: string }
  | { type: 'TOOL_CALL_RESULT'; toolCallId: string; content: unknown }
  | { type: 'REASONING_MESSAGE_CONTENT'; delta: string }
  | { type: 'REASONING_MESSAGE_CHUNK'; delta?: string }
  | {
      type: 'RUN_FINISHED';
      usage?: TokenUsage[];
      outcome?: { type: string; interrupts?: { message?: string; reason?: string; toolCallId?: string }[] };
    }
  | { type: 'RUN_ERROR'; message: string; code?: string; usage?: TokenUsage[] }
  | { type: 'CUSTOM'; name: string; value: unknown }
  | { type: 'OTHER' };

interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
  /** Not AG-UI's (its entries are open to more fields): a producer's count of the requests the entry sums. */
  requests?: unknown;
}

/**
 * AG-UI's TokenUsage entries as one run's usage. An entry is one provider and model (AG-UI 1.0), not one request, so
 * the requests are those the entries count themselves (a `requests` number some producers add), else 0: unknown.
 */
function fromTokenUsage(entries: readonly TokenUsage[]): RunUsageView {
  const sum = (key: keyof TokenUsage) => entries.reduce((n, e) => n + (typeof e[key] === 'number' ? (e[key] as number) : 0), 0);
  const input = sum('inputTokens');
  const output = sum('outputTokens');
  return {
    requests: entries.reduce(
      (n, e) => n + (typeof e.requests === 'number' && Number.isFinite(e.requests) && e.requests > 0 ? e.requests : 0),
      0,
    ),
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
