/**
 * AG-UI's HTTP transport, the client side (docs/agent-command.md §7): the `RunAgentInput` POSTed as JSON, the answer
 * read as server-sent events whose `data:` fields each carry one event. Uses Node's `fetch`; nothing else is needed.
 */

/** How a request to an agent URL ended. */
export interface HttpEnd {
  /** The HTTP status, when the server answered. */
  status?: number;
  /** Why it could not be reached or the stream broke (not set for an abort we asked for). */
  error?: string;
  /** Why we aborted it, when we did. */
  stoppedBy?: 'stop' | 'timeout';
  /** The start of an error answer's body. */
  body?: string;
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
}

export async function runOverHttp(options: HttpRunOptions): Promise<HttpEnd> {
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
  try {
    let response: Response;
    try {
      response = await fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...options.headers },
        body: JSON.stringify(options.input),
        signal: controller.signal,
      });
    } catch (err) {
      return stoppedBy ? { stoppedBy } : { error: causeText(err) };
    }
    if (!response.ok) {
      const body = await response.text().catch(() => '');
      return { status: response.status, body: body.slice(0, 500) };
    }
    if (!response.body) return { status: response.status };
    try {
      await readEvents(response.body, options);
    } catch (err) {
      return stoppedBy ? { status: response.status, stoppedBy } : { status: response.status, error: causeText(err) };
    }
    return stoppedBy ? { status: response.status, stoppedBy } : { status: response.status };
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Reads a text/event-stream body: events end at a blank line; their `data:` lines are joined with newlines. */
async function readEvents(body: ReadableStream<Uint8Array>, options: HttpRunOptions): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const dispatch = () => {
    if (data.length === 0) return;
    const text = data.join('\n');
    data = [];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      options.onInvalid(text);
      return;
    }
    options.onEvent(value, text);
  };
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') dispatch();
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      // Comments (`:`), `event:`, `id:` and `retry:` carry nothing we use: AG-UI puts the type in the data.
    }
  }
  if (buffer.startsWith('data:')) data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5));
  dispatch();
}

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND). */
function causeText(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message ?? 'failed'}: ${cause}` : (e.message ?? String(err));
}
