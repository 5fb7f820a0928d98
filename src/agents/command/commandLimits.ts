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

/** What a run that met the bound says, naming it. */
export function overlongEventText(who: string, count: number, what: 'line' | 'event', maxChars = MAX_EVENT_LINE_CHARS): string {
  const unit = maxChars >= 1024 * 1024 ? ` (${maxChars / 1024 / 1024} MiB)` : '';
  const thing = what === 'line' ? `stdout line${count > 1 ? 's' : ''}` : `server-sent event${count > 1 ? 's' : ''}`;
  return (
    `${who} sent ${count} ${thing} longer than ${formatCount(maxChars)} characters${unit}, the bound of one AG-UI event ` +
    `(MAX_EVENT_LINE_CHARS); ${count > 1 ? 'they were' : 'it was'} discarded unread.`
  );
}
