/**
 * The bounds on what an agent command or an agent URL sends us (docs/agent-command.md §6), so a runaway agent
 * cannot fill the memory of the CLI or the extension host.
 */
import { formatCount } from '../../store/export/importLimits';

/**
 * The longest stdout line, or server-sent event, read as one AG-UI event: 16 Mi characters. An event is a text or
 * argument delta, one tool result, one item for the live view, or one batch of spans, and batches can be split across
 * events; 16 MiB holds a large tool output or a base64 image many times over, while a line is gathered in memory
 * (and parsed) only up to it. A longer line is dropped as it arrives, never gathered, and fails the run.
 */
export const MAX_EVENT_LINE_CHARS = 16 * 1024 * 1024;

/**
 * The longest stderr line kept: 64 Ki characters. Stderr is for people (the log, the last 20 lines on the outcome),
 * so a longer line is left out, and a line says so in its place; 20 such lines cost about a megabyte at most.
 */
export const MAX_STDERR_LINE_CHARS = 64 * 1024;

/**
 * How much of a command's stdout and stderr may have been read from its pipes and not yet taken by the thread that
 * splits it into lines: 1 Mi characters. The pipes are read on the launcher's thread (launcher.ts); past this bound it
 * stops reading them, so an agent printing faster than we read waits on its pipe instead of filling our memory.
 */
export const MAX_OUTPUT_IN_FLIGHT_CHARS = 1024 * 1024;

/** How much of an error answer's body (an agent URL's HTTP 4xx/5xx) is read and quoted: 500 characters. */
export const MAX_ERROR_BODY_CHARS = 500;

/**
 * What a run keeps of its tool calls' arguments, as opposed to what one event may carry: one call's arguments are
 * gathered from any number of TOOL_CALL_ARGS events, each under the event bound, so without these a run could grow
 * them without end (60 deltas of 8 Mi characters once cost the CLI 2.9 GB). One call keeps at most 1 Mi characters
 * (`MAX_TOOL_CALL_ARGS_CHARS`), shown in its `tool/called` event; all the calls the run holds at once (begun, or
 * ended and not yet answered by TOOL_CALL_RESULT: their ids, names and arguments together) at most 16 Mi characters
 * (`MAX_RUN_TOOL_CALL_CHARS`). Arguments past either bound are cut, and the cut is marked in what is shown; a call
 * begun past the run's bound is not shown, and counted. The settlement reads the calls from the file, not from here.
 */
export const MAX_TOOL_CALL_ARGS_CHARS = 1024 * 1024;
export const MAX_RUN_TOOL_CALL_CHARS = 16 * 1024 * 1024;

/**
 * The most span text a run keeps for the trace store (`agent-sessions.spans` and `agent-sessions.otlp` values, as
 * JSON): 32 Mi characters, beside the 10,000 spans of `MAX_RUN_SPANS`. Spans arrive in many events, each under the
 * event bound; past this the rest are left out and counted, as past the count.
 */
export const MAX_RUN_SPAN_CHARS = 32 * 1024 * 1024;

/**
 * The most text held back from the live view at once: 1 Mi characters. Text of an assistant message that streams
 * while another one is shown waits for that one's end, so two messages never show interleaved; past this bound the
 * waiting text is shown at once (after a line break) rather than held further.
 */
export const MAX_HELD_TEXT_CHARS = 1024 * 1024;

/**
 * How long an agent may go on after the event that ended its run (RUN_FINISHED or RUN_ERROR: AG-UI allows nothing
 * after them but one RUN_ERROR): 2 s. A command then still running is stopped (SIGTERM, then SIGKILL) and an event
 * stream still open is closed; neither fails the run, which ended with that event.
 */
export const AFTER_RUN_END_MS = 2000;

/** What a run that met the bound says, naming it. */
export function overlongEventText(who: string, count: number, what: 'line' | 'event', maxChars = MAX_EVENT_LINE_CHARS): string {
  const unit = maxChars >= 1024 * 1024 ? ` (${maxChars / 1024 / 1024} MiB)` : '';
  const thing = what === 'line' ? `stdout line${count > 1 ? 's' : ''}` : `server-sent event${count > 1 ? 's' : ''}`;
  return (
    `${who} sent ${count} ${thing} longer than ${formatCount(maxChars)} characters${unit}, the bound of one AG-UI event ` +
    `(MAX_EVENT_LINE_CHARS); ${count > 1 ? 'they were' : 'it was'} discarded unread.`
  );
}
