/**
 * A small OpenAI-compatible server on 127.0.0.1 for tests: `POST /v1/responses`, as JSON or (with `stream: true`)
 * as server-sent events in the Responses API's format (and `POST /v1/chat/completions`, JSON text replies only, for
 * the check's judge model), so the real `openai` client and `@openai/agents`'
 * `OpenAIResponsesModel` run end to end without a network or a key. A script decides each reply from the request;
 * every request is recorded (headers included) so tests can check what was sent, and every reply's usage is
 * recorded so tests can derive the expected database contents from what the server said.
 *
 * The event sequence follows the API (and what `OpenAIResponsesModel.getStreamedResponse` reads): response.created,
 * response.in_progress, then per output item response.output_item.added, its content/argument deltas and done
 * events, response.output_item.done, and finally response.completed carrying the whole response with usage.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A function call the model makes. */
export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown> | string;
  callId?: string;
}

/** Knobs shared by the replies that produce a response. */
export interface StreamKnobs {
  /** Milliseconds between SSE events (slow streaming, for cancel tests). */
  delayMs?: number;
  /** Destroy the connection after writing this many SSE events (a server that dies mid-stream). */
  closeAfterEvents?: number;
}

/** What the server answers to one request. */
export type LoopbackReply =
  | ({ kind: 'text'; text: string; chunks?: string[] } & StreamKnobs)
  | ({ kind: 'calls'; calls: ScriptedCall[] } & StreamKnobs)
  /** An HTTP error with an OpenAI-style JSON body; `echoAuthorization` puts the received key in the message, as some servers do. */
  | { kind: 'error'; status: number; message?: string; echoAuthorization?: boolean }
  /** Destroy the connection without answering. */
  | { kind: 'close' };

/** A request as received. */
export interface RecordedRequest {
  index: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The `Authorization` header, verbatim. */
  authorization: string | undefined;
  body: ResponsesRequestBody;
  stream: boolean;
}

/** The parts of a Responses API request body the tests look at. */
export interface ResponsesRequestBody {
  model?: string;
  instructions?: string | null;
  input?: unknown;
  tools?: { type: string; name?: string }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** The usage object of a response, as sent. */
export interface SentUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A reply as sent. */
export interface SentReply {
  requestIndex: number;
  responseId: string;
  reply: LoopbackReply;
  /** Present for replies that produced a response (text or calls) and were completed. */
  usage?: SentUsage;
  /** Text deltas in the order they were written. */
  deltas: string[];
  /** Call ids of the function calls sent. */
  callIds: string[];
  /** True when the client went away before the reply was complete. */
  clientAborted: boolean;
  /** When the last byte of a complete reply was written (Date.now()). */
  finishedAt?: number;
}

export type LoopbackScript = (request: RecordedRequest) => LoopbackReply | Promise<LoopbackReply>;

export interface LoopbackOptions {
  script: LoopbackScript;
  /**
   * Reject input that pairs tool calls and outputs wrongly with 400, as the API does ("No tool output found for
   * function call …"), so a dangling call left in a session makes the next run fail here as it would there.
   * Default true.
   */
  validateToolPairs?: boolean;
}

/** A running loopback server. */
export interface LoopbackOpenAI {
  /** `http://127.0.0.1:<port>/v1`, for the OpenAI client's `baseURL`. */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  replies: SentReply[];
  /** Replaces the script (for the next requests). */
  setScript(script: LoopbackScript): void;
  close(): Promise<void>;
}

let idCounter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(++idCounter).toString(36).padStart(4, '0')}`;

/** Deterministic token counts, from the request and reply sizes (like a tokenizer's order of magnitude). */
function usageFor(body: ResponsesRequestBody, outputChars: number, calls: number): SentUsage {
  const input = 5 + Math.ceil(JSON.stringify(body.input ?? '').length / 4) + Math.ceil(String(body.instructions ?? '').length / 4);
  const output = 1 + Math.ceil(outputChars / 4);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: Math.floor(input / 3) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: calls > 0 ? 7 : 3 },
    total_tokens: input + output,
  };
}

/** Checks call/output pairing in the request's input, as the Responses API does. */
function toolPairProblem(input: unknown): string | undefined {
  if (!Array.isArray(input)) return undefined;
  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const item of input) {
    if (typeof item !== 'object' || item === null) continue;
    const i = item as Record<string, unknown>;
    if (i.type === 'function_call' && typeof i.call_id === 'string') calls.add(i.call_id);
    if (i.type === 'function_call_output' && typeof i.call_id === 'string') {
      if (!calls.has(i.call_id)) return `No tool call found for function call output with call_id ${i.call_id}.`;
      outputs.add(i.call_id);
    }
  }
  for (const c of calls) if (!outputs.has(c)) return `No tool output found for function call ${c}.`;
  return undefined;
}

function baseResponse(id: string, body: ResponsesRequestBody, status: string, output: unknown[], usage: SentUsage | null) {
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: null,
    model: body.model ?? 'loopback-model',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: {},
  };
}

/** The output items of a reply, plus the SSE events that produce them (without the envelope events). */
function buildOutput(reply: Extract<LoopbackReply, { kind: 'text' | 'calls' }>, sent: SentReply) {
  const items: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  let outputChars = 0;
  if (reply.kind === 'text') {
    const id = nextId('msg');
    const part = { type: 'output_text', text: reply.text, annotations: [], logprobs: [] };
    const chunks = reply.chunks ?? reply.text.match(/\S+\s*|\s+/g) ?? [reply.text];
    if (chunks.join('') !== reply.text) throw new Error('loopback: chunks must join to the text');
    const done = { id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    events.push({ type: 'response.output_item.added', output_index: 0, item: { ...done, status: 'in_progress', content: [] } });
    events.push({ type: 'response.content_part.added', item_id: id, output_index: 0, content_index: 0, part: { ...part, text: '' } });
    for (const delta of chunks) {
      events.push({ type: 'response.output_text.delta', item_id: id, output_index: 0, content_index: 0, delta, logprobs: [] });
    }
    events.push({ type: 'response.output_text.done', item_id: id, output_index: 0, content_index: 0, text: reply.text, logprobs: [] });
    events.push({ type: 'response.content_part.done', item_id: id, output_index: 0, content_index: 0, part });
    events.push({ type: 'response.output_item.done', output_index: 0, item: done });
    items.push(done);
    outputChars = reply.text.length;
  } else {
    reply.calls.forEach((call, outputIndex) => {
      const id = nextId('fc');
      const callId = call.callId ?? nextId('call');
      sent.callIds.push(callId);
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      const done = { id, type: 'function_call', status: 'completed', call_id: callId, name: call.name, arguments: args };
      events.push({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...done, status: 'in_progress', arguments: '' },
      });
      // Arguments arrive in pieces, as a real model streams them.
      for (const piece of args.match(/.{1,8}/gs) ?? []) {
        events.push({ type: 'response.function_call_arguments.delta', item_id: id, output_index: outputIndex, delta: piece });
      }
      events.push({ type: 'response.function_call_arguments.done', item_id: id, output_index: outputIndex, arguments: args });
      events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
      items.push(done);
      outputChars += call.name.length + args.length;
    });
  }
  return { items, events, outputChars, calls: reply.kind === 'calls' ? reply.calls.length : 0 };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts a server on 127.0.0.1 on a free port. */
export async function startLoopbackOpenAI(options: LoopbackOptions): Promise<LoopbackOpenAI> {
  let script = options.script;
  const validate = options.validateToolPairs ?? true;
  const requests: RecordedRequest[] = [];
  const replies: SentReply[] = [];
  const sockets = new Set<Socket>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0] ?? '';
    const chat = path === '/v1/chat/completions';
    if (req.method !== 'POST' || (path !== '/v1/responses' && !chat)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Unknown path ${req.method} ${path}`, type: 'invalid_request_error' } }));
      return;
    }
    let body: ResponsesRequestBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ResponsesRequestBody;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Invalid JSON body', type: 'invalid_request_error' } }));
      return;
    }
    const auth = req.headers.authorization;
    const recorded: RecordedRequest = {
      index: requests.length,
      method: req.method,
      path,
      headers: { ...req.headers },
      authorization: auth,
      body,
      stream: body.stream === true,
    };
    requests.push(recorded);

    const pairProblem = validate && !chat ? toolPairProblem(body.input) : undefined;
    const reply: LoopbackReply = pairProblem ? { kind: 'error', status: 400, message: pairProblem } : await script(recorded);
    const responseId = nextId('resp');
    const sent: SentReply = { requestIndex: recorded.index, responseId, reply, deltas: [], callIds: [], clientAborted: false };
    replies.push(sent);
    let clientGone = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        clientGone = true;
        sent.clientAborted = true;
      }
    });

    if (reply.kind === 'close') {
      req.socket.destroy();
      return;
    }
    if (reply.kind === 'error') {
      const token = typeof auth === 'string' ? auth.replace(/^Bearer\s+/i, '') : '';
      const message =
        (reply.message ?? `Loopback error ${reply.status}`) + (reply.echoAuthorization ? ` Incorrect API key provided: ${token}.` : '');
      res.writeHead(reply.status, { 'content-type': 'application/json', 'x-request-id': `req_${recorded.index}` });
      res.end(
        JSON.stringify({
          error: {
            message,
            type: reply.status === 401 ? 'invalid_request_error' : 'server_error',
            code: reply.status === 401 ? 'invalid_api_key' : null,
            param: null,
          },
        }),
      );
      sent.finishedAt = Date.now();
      return;
    }

    if (chat) {
      // Chat completions (a judge model's endpoint): one JSON answer with the text, no streaming, no tool calls.
      const text = reply.kind === 'text' ? reply.text : '';
      const prompt = Math.ceil(JSON.stringify(body.messages ?? '').length / 4);
      const completion = Math.ceil(text.length / 4) + 1;
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${recorded.index}` });
      res.end(
        JSON.stringify({
          id: responseId,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? 'loopback',
          choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
        }),
      );
      sent.deltas.push(text);
      sent.finishedAt = Date.now();
      return;
    }
    const { items, events, outputChars, calls } = buildOutput(reply, sent);
    const usage = usageFor(body, outputChars, calls);
    if (!recorded.stream) {
      sent.usage = usage;
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${recorded.index}` });
      res.end(JSON.stringify(baseResponse(responseId, body, 'completed', items, usage)));
      sent.finishedAt = Date.now();
      return;
    }

    const all = [
      { type: 'response.created', response: baseResponse(responseId, body, 'in_progress', [], null) },
      { type: 'response.in_progress', response: baseResponse(responseId, body, 'in_progress', [], null) },
      ...events,
      { type: 'response.completed', response: baseResponse(responseId, body, 'completed', items, usage) },
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `req_${recorded.index}` });
    let written = 0;
    for (const [sequence, event] of all.entries()) {
      if (clientGone) return;
      if (reply.closeAfterEvents !== undefined && written >= reply.closeAfterEvents) {
        // Let what was written reach the client first, so it sees a stream that stops, not a failed request.
        await sleep(50);
        req.socket.destroy();
        return;
      }
      if (reply.delayMs && sequence > 0) await sleep(reply.delayMs);
      if (clientGone) return;
      const data = { ...event, sequence_number: sequence };
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(data)}\n\n`);
      if (event.type === 'response.output_text.delta') sent.deltas.push(String((event as { delta: unknown }).delta));
      written++;
    }
    sent.usage = usage;
    res.end();
    sent.finishedAt = Date.now();
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `loopback failure: ${String(err)}`, type: 'server_error' } }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    replies,
    setScript(next) {
      script = next;
    },
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolveClose());
      }),
  };
}

/** A port nothing listens on (bound, then released), for "unreachable server" tests. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** The text of the last user message in a Responses request's input. */
export function lastUserText(body: ResponsesRequestBody): string {
  const input = body.input;
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as Record<string, unknown>;
    if (item && item.role === 'user') {
      const c = item.content;
      if (typeof c === 'string') return c;
      if (Array.isArray(c))
        return c.map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
    }
  }
  return '';
}

/** The function_call_output items of a request's input, in order. */
export function toolOutputsIn(body: ResponsesRequestBody): { call_id: string; output: unknown }[] {
  return Array.isArray(body.input)
    ? (body.input as Record<string, unknown>[])
        .filter((i) => i && i.type === 'function_call_output')
        .map((i) => ({ call_id: String(i.call_id), output: i.output }))
    : [];
}
