/**
 * AG-UI's HTTP transport, the client side (docs/agent-command.md §7): the `RunAgentInput` POSTed as JSON, the answer
 * read as server-sent events whose `data:` fields each carry one event. Uses Node's `fetch`; nothing else is needed.
 */
import { AFTER_RUN_END_MS, MAX_ERROR_BODY_CHARS, MAX_EVENT_LINE_CHARS } from './commandLimits';

/** How a request to an agent URL ended. */
export interface HttpEnd {
  /** The HTTP status, when the server answered. */
  status?: number;
  /** Why it could not be reached or the stream broke (not set for an abort we asked for). */
  error?: string;
  /** Why we aborted it, when we did. */
  stoppedBy?: 'stop' | 'timeout';
  /** The start of an error answer's body (or of a 2xx answer that is not an event stream). */
  body?: string;
  /** The content type of a 2xx answer that is not an event stream (it was not read as one). */
  notEventStream?: string;
  /**
   * The stream was still open `AFTER_RUN_END_MS` after the run's terminal event (`runEnded`), and we closed it; or it
   * broke off in that time (`error` then says how). Neither is the run's failure: the run had ended.
   */
  closedAfterRunEnd?: boolean;
  /** Events longer than `maxEventChars`, discarded unread. */
  overlongEvents: number;
}

export interface HttpRunOptions {
  url: string;
  input: unknown;
  /** Each event decoded from a `data:` field; a field that is not JSON comes as `{ invalid: text }`. */
  onEvent: (value: unknown, source: string) => void;
  onInvalid: (text: string) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** The longest event (its lines, and its `data:` joined) read (default `MAX_EVENT_LINE_CHARS`). */
  maxEventChars?: number;
  /**
   * Aborted once the run's terminal event was read (RUN_FINISHED, RUN_ERROR): the stream then gets `afterRunEndMs`
   * (default `AFTER_RUN_END_MS`) to end on its own (a RUN_ERROR may still follow RUN_FINISHED), then it is closed.
   */
  runEnded?: AbortSignal;
  afterRunEndMs?: number;
}

export async function runOverHttp(options: HttpRunOptions): Promise<HttpEnd> {
  const counts = { overlong: 0 };
  const end = await request(options, counts);
  return { ...end, overlongEvents: counts.overlong };
}

async function request(options: HttpRunOptions, counts: { overlong: number }): Promise<Omit<HttpEnd, 'overlongEvents'>> {
  const controller = new AbortController();
  let stoppedBy: HttpEnd['stoppedBy'];
  const onAbort = () => {
    stoppedBy ??= 'stop';
    controller.abort();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    options.timeoutMs && options.timeoutMs > 0
      ? setTimeout(() => {
          stoppedBy ??= 'timeout';
          controller.abort();
        }, options.timeoutMs)
      : undefined;
  // Nothing of the run may follow its end: a server that keeps the stream open (heartbeats, a proxy's keep-alive)
  // would otherwise hold the run open until its timeout, or for ever, and fail a run that completed.
  let closedAfterRunEnd = false;
  let afterEndTimer: NodeJS.Timeout | undefined;
  const onRunEnded = () => {
    afterEndTimer ??= setTimeout(() => {
      closedAfterRunEnd = true;
      controller.abort();
    }, options.afterRunEndMs ?? AFTER_RUN_END_MS);
  };
  if (options.runEnded?.aborted) onRunEnded();
  else options.runEnded?.addEventListener('abort', onRunEnded, { once: true });
  try {
    let response: Response;
    try {
      response = await fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...options.headers },
        body: JSON.stringify(options.input),
        signal: controller.signal,
        // Never followed: a redirect would send the run's input (the user's message, the session, the recorded calls
        // a replay carries) again to an address the user did not give, maybe another host.
        redirect: 'manual',
      });
    } catch (err) {
      return stoppedBy ? { stoppedBy } : { error: causeText(err) };
    }
    if (response.status >= 300 && response.status < 400) {
      void response.body?.cancel().catch(() => undefined);
      const to = response.headers.get('location');
      return {
        status: response.status,
        body: `a redirect${to ? ` to ${to.slice(0, MAX_ERROR_BODY_CHARS)}` : ''}, which is not followed: give the agent's final URL`,
      };
    }
    if (!response.ok) return { status: response.status, body: await bodyStart(response) };
    // An answer of another type (JSON, AG-UI's binary encoding, an HTML error page behind a proxy) holds no events
    // we can read: say what came, rather than that the stream "ended before RUN_FINISHED". A missing type is read.
    const type = response.headers.get('content-type');
    if (type !== null && !/^\s*text\/event-stream\s*(;|$)/i.test(type))
      return { status: response.status, notEventStream: type.slice(0, MAX_ERROR_BODY_CHARS), body: await bodyStart(response) };
    if (!response.body) return { status: response.status };
    try {
      await readEvents(response.body, options, counts);
    } catch (err) {
      if (closedAfterRunEnd) return { status: response.status, closedAfterRunEnd };
      // A break after the run's end is no failure of the run, but is told (the caller logs it).
      if (options.runEnded?.aborted) return { status: response.status, closedAfterRunEnd: true, error: causeText(err) };
      return stoppedBy ? { status: response.status, stoppedBy } : { status: response.status, error: causeText(err) };
    }
    return stoppedBy ? { status: response.status, stoppedBy } : { status: response.status };
  } finally {
    if (timer) clearTimeout(timer);
    if (afterEndTimer) clearTimeout(afterEndTimer);
    options.signal?.removeEventListener('abort', onAbort);
    options.runEnded?.removeEventListener('abort', onRunEnded);
  }
}

/**
 * Reads a text/event-stream body: events end at a blank line; their `data:` lines are joined with newlines. An event
 * longer than the bound (a line of it, or its data together) is dropped as it arrives, never gathered: the rest of it
 * is skipped up to its blank line, and it is counted, so a server that never ends a line costs no more memory than
 * the bound.
 */
async function readEvents(body: ReadableStream<Uint8Array>, options: HttpRunOptions, counts: { overlong: number }): Promise<void> {
  const max = options.maxEventChars ?? MAX_EVENT_LINE_CHARS;
  const decoder = new TextDecoder();
  /** The line being read, in pieces: only new text is searched for its end. */
  let line: string[] = [];
  let lineSize = 0;
  /** Whether the line has any text, kept even while its text is skipped: only an empty line ends an event. */
  let lineEmpty = true;
  let data: string[] = [];
  let dataSize = 0;
  /** Skipping the rest of an event that went over the bound, up to its blank line. */
  let skipping = false;
  const overlong = () => {
    counts.overlong++;
    skipping = true;
    data = [];
    dataSize = 0;
    line = [];
    lineSize = 0;
  };
  const dispatch = () => {
    if (skipping) {
      skipping = false;
      return;
    }
    if (data.length === 0) return;
    const text = data.join('\n');
    data = [];
    dataSize = 0;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      options.onInvalid(text);
      return;
    }
    options.onEvent(value, text);
  };
  const endLine = () => {
    const text = line.join('').replace(/\r$/, '');
    const empty = lineEmpty;
    line = [];
    lineSize = 0;
    lineEmpty = true;
    if (empty) dispatch();
    else if (!skipping && text.startsWith('data:')) {
      const value = text.slice(text.startsWith('data: ') ? 6 : 5);
      if (dataSize + value.length + 1 > max) overlong();
      else {
        data.push(value);
        dataSize += value.length + 1;
      }
    }
    // Comments (`:`), `event:`, `id:` and `retry:` carry nothing we use: AG-UI puts the type in the data.
  };
  const take = (piece: string) => {
    if (piece === '' || (piece === '\r' && lineEmpty)) return;
    lineEmpty = false;
    if (skipping) return;
    if (lineSize + piece.length > max) overlong();
    else {
      line.push(piece);
      lineSize += piece.length;
    }
  };
  const reader = body.getReader();
  // A line ends at CR LF, LF or CR alone (the SSE format allows all three); a CR that ends a chunk may be the first
  // half of a CR LF, whose LF then starts the next chunk and ends nothing.
  const lineBreak = /[\r\n]/g;
  let afterCR = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const chunk = decoder.decode(value, { stream: true });
    let start = afterCR && chunk.startsWith('\n') ? 1 : 0;
    afterCR = false;
    lineBreak.lastIndex = start;
    let m: RegExpExecArray | null;
    while ((m = lineBreak.exec(chunk)) !== null) {
      take(chunk.slice(start, m.index));
      endLine();
      start = m.index + 1;
      if (m[0] === '\r') {
        if (chunk[start] === '\n') start++;
        else if (start === chunk.length) afterCR = true;
      }
      lineBreak.lastIndex = start;
    }
    take(chunk.slice(start));
  }
  if (!lineEmpty) endLine();
  dispatch();
}

/** The start of an error answer's body: read only that far, so a server's endless answer costs nothing. */
async function bodyStart(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < MAX_ERROR_BODY_CHARS) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // A body that broke off: what came is what there is.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return text.slice(0, MAX_ERROR_BODY_CHARS);
}

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND). */
function causeText(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message ?? 'failed'}: ${cause}` : (e.message ?? String(err));
}
