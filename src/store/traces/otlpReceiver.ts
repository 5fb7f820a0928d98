/**
 * An OTLP/HTTP trace receiver (`POST /v1/traces`, JSON or protobuf bodies, gzip or deflate or none), for agents that
 * run anywhere else: the user's service, a notebook, CI. Loopback only unless asked otherwise, and only requests
 * addressed to the receiver itself (`Host`, receiverAddress.ts: 421 otherwise). Each request's body goes
 * to `ingest` in one call (decoded and stored in one transaction, in this thread or the store worker); a bad body gets OTLP's 400/413/415 with the reason, a
 * request beyond the backlog gets 503 with `Retry-After` (exporters retry it), so a flood neither crashes the
 * receiver nor grows its memory without bound. A request whose headers or body trickle in gets 408 and its connection
 * closed once `requestTimeoutMs` has passed, so a few slow senders hold the backlog for seconds, not Node's 300.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';
import { TRACE_LIMITS } from './otlpSpans';
import { expectedHosts, hostHeaderAllowed } from './receiverAddress';
import { TraceInputError } from './traceErrors';
import type { IngestResult, OtlpFormat } from './traceStore';
import { SessionError } from '../errors';

/**
 * Where a request's body goes to be decoded and stored: `TraceStore.ingestOtlp` in this thread (the CLI), or the
 * store worker's trace store (the extension: decoding and storing never run on the host's thread).
 */
export type OtlpIngest = (body: Uint8Array, format: OtlpFormat) => IngestResult | Promise<IngestResult>;

export interface OtlpReceiverOptions {
  /** Default 127.0.0.1: nothing off the machine can send unless the user says so. */
  host?: string;
  /** Default 4318, OTLP/HTTP's port; 0 picks a free one. */
  port?: number;
  ingest: OtlpIngest;
  /** The largest body taken, after decompression (default `TRACE_LIMITS.maxBodyBytes`). */
  maxBodyBytes?: number;
  /** Requests being read or stored at once beyond which new ones get 503 (default 8). */
  maxInFlight?: number;
  /**
   * How long a request's headers may take to arrive, and then its body (default `REQUEST_TIMEOUT_MS`): 408 and the
   * connection closed past either.
   */
  requestTimeoutMs?: number;
  /**
   * Names besides the receiver's own address that requests may carry in `Host` (a DNS name of this machine that
   * exporters elsewhere use). Requests naming anything else get 421: see receiverAddress.ts.
   */
  allowedHosts?: readonly string[];
  /** Told of every request handled (for the CLI's log and the extension's status). */
  onBatch?: (info: BatchInfo) => void;
}

export interface BatchInfo {
  spans: number;
  rejected: number;
  reasons: string[];
  /** Set when the whole request was refused. */
  status: number;
  error?: string;
  services: string[];
}

/** The receiver could not start: the port is taken, or the address cannot be bound. */
export class OtlpReceiverError extends SessionError {
  constructor(
    readonly problem: 'port-in-use' | 'cannot-listen',
    message: string,
  ) {
    super(message);
  }
}

export const DEFAULT_OTLP_PORT = 4318;

/**
 * 10 s for a request's headers, and 10 s more for its body: OpenTelemetry's exporters give up on a request after 10 s
 * (`OTEL_EXPORTER_OTLP_TIMEOUT`'s default), so no exporter still waits on one that takes longer, while a sender that
 * trickles bytes would hold a place in the backlog (`maxInFlight`) for Node's default of 300 s.
 */
export const REQUEST_TIMEOUT_MS = 10_000;

/** google.rpc.Status / ExportTraceServiceResponse in protobuf: the few fields a receiver answers with. */
function protoString(field: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([Buffer.from([(field << 3) | 2]), varint(bytes.length), bytes]);
}
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}
function protoMessage(field: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2]), varint(body.length), body]);
}

export class OtlpReceiver {
  private inFlight = 0;
  private constructor(
    private readonly server: Server,
    private readonly options: OtlpReceiverOptions,
    /** The address listened on, as given (the `Host` check compares against it). */
    private readonly host: string,
  ) {}

  /** Starts listening; fails with `OtlpReceiverError` when the port is taken. */
  static async start(options: OtlpReceiverOptions): Promise<OtlpReceiver> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? DEFAULT_OTLP_PORT;
    const timeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    const server = createServer({
      // Node's own bounds: the headers (408 from Node), and the whole request as a backstop behind the body's own
      // deadline (`readBody`), checked every second rather than Node's default 30.
      headersTimeout: timeout,
      requestTimeout: 2 * timeout + 1000,
      connectionsCheckingInterval: Math.min(1000, timeout),
    });
    const receiver = new OtlpReceiver(server, options, host);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void receiver.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(
          err.code === 'EADDRINUSE'
            ? new OtlpReceiverError(
                'port-in-use',
                `Port ${port} on ${host} is taken (another OTLP collector or receiver?). Stop it, or choose another port (the agentSessions.traces.receiver.port setting, or --listen ${host}:<port>), and point the agent's exporter there.`,
              )
            : new OtlpReceiverError('cannot-listen', `Cannot listen on ${host}:${port}: ${err.message}`),
        );
      });
      server.listen(port, host, () => resolve());
    });
    return receiver;
  }

  /** Where exporters send: `http://host:port/v1/traces`. */
  get url(): string {
    const a = this.server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}/v1/traces`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // First of all: a request addressed to another name (a DNS-rebinding page in the user's browser) learns nothing.
    if (!hostHeaderAllowed(req.headers.host, { host: this.host, port: this.port }, this.options.allowedHosts)) {
      const message = `This OTLP receiver answers requests addressed to ${expectedHosts(this.host, this.port).join(', ')} only, not to Host ${JSON.stringify(req.headers.host ?? '')}.`;
      this.options.onBatch?.({ spans: 0, rejected: 0, reasons: [], status: 421, error: message, services: [] });
      req.resume();
      res.setHeader('connection', 'close');
      this.reply(res, 421, isProtobuf(req), { error: message });
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/v1/traces') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('This OTLP receiver takes traces only: POST /v1/traces.\n');
      req.resume();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('POST OTLP traces here.\n');
      req.resume();
      return;
    }
    const type = contentType(req);
    const protobuf = isProtobuf(req);
    const report = (info: Omit<BatchInfo, 'services'> & { services?: string[] }): void => this.options.onBatch?.({ services: [], ...info });
    const fail = (status: number, message: string): void => {
      report({ spans: 0, rejected: 0, reasons: [], status, error: message });
      this.reply(res, status, protobuf, { error: message });
    };
    if (!protobuf && type !== 'application/json') {
      req.resume();
      fail(415, `Content-Type ${type || '(none)'} is not OTLP: send application/json or application/x-protobuf.`);
      return;
    }
    if (this.inFlight >= (this.options.maxInFlight ?? 8)) {
      req.resume();
      res.setHeader('retry-after', '1');
      fail(503, 'The receiver is still storing earlier requests: retry shortly.');
      return;
    }
    this.inFlight++;
    try {
      const body = await readBody(
        req,
        this.options.maxBodyBytes ?? TRACE_LIMITS.maxBodyBytes,
        this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      );
      const result = await this.options.ingest(body, protobuf ? 'protobuf' : 'json');
      report({ spans: result.spans, rejected: result.rejected, reasons: result.reasons, status: 200, services: result.services });
      this.reply(res, 200, protobuf, result.rejected > 0 ? { rejected: result.rejected, error: result.reasons.join('; ') } : {});
    } catch (err) {
      if (err instanceof TraceInputError) {
        // The rest of the body is not read: the connection cannot carry another request.
        if (err.problem === 'too-large' || err.problem === 'too-slow') res.setHeader('connection', 'close');
        fail(err.httpStatus, err.message);
      } else {
        // The store could not take them (locked, full disk): 503 tells the exporter to try again.
        res.setHeader('retry-after', '5');
        fail(503, `The spans could not be stored: ${err instanceof Error ? err.message : String(err)}`);
      }
    } finally {
      this.inFlight--;
    }
  }

  private reply(res: ServerResponse, status: number, protobuf: boolean, body: { rejected?: number; error?: string }): void {
    if (res.headersSent) return;
    let payload: Buffer;
    if (status !== 200) {
      // google.rpc.Status: code 3 (INVALID_ARGUMENT), 4 (DEADLINE_EXCEEDED: too slow), 7 (PERMISSION_DENIED: not
      // addressed to us) or 14 (UNAVAILABLE), and the message.
      const code = status === 503 ? 14 : status === 421 ? 7 : status === 408 ? 4 : 3;
      payload = protobuf
        ? Buffer.concat([Buffer.from([0x08]), varint(code), protoString(2, body.error ?? '')])
        : Buffer.from(JSON.stringify({ code, message: body.error ?? '' }));
    } else if (body.rejected) {
      // ExportTraceServiceResponse.partial_success: rejected_spans (1) and error_message (2).
      payload = protobuf
        ? protoMessage(1, Buffer.concat([Buffer.from([0x08]), varint(body.rejected), protoString(2, body.error ?? '')]))
        : Buffer.from(JSON.stringify({ partialSuccess: { rejectedSpans: String(body.rejected), errorMessage: body.error ?? '' } }));
    } else payload = protobuf ? Buffer.alloc(0) : Buffer.from('{}');
    res.writeHead(status, { 'content-type': protobuf ? 'application/x-protobuf' : 'application/json', 'content-length': payload.length });
    res.end(payload);
  }
}

const contentType = (req: IncomingMessage): string => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
/** Whether the request is OTLP protobuf (answered in protobuf); JSON otherwise. */
const isProtobuf = (req: IncomingMessage): boolean => ['application/x-protobuf', 'application/protobuf'].includes(contentType(req));

/** The request body, decompressed, at most `maxBytes`, arrived within `timeoutMs` (else 408). */
function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  let stream: NodeJS.ReadableStream = req;
  let inflater: Gunzip | Inflate | undefined;
  if (encoding === 'gzip' || encoding === 'x-gzip') inflater = createGunzip();
  else if (encoding === 'deflate') inflater = createInflate();
  else if (encoding !== 'identity' && encoding !== '') {
    req.resume();
    return Promise.reject(new TraceInputError('unsupported', `Content-Encoding ${encoding} is not read here: send gzip, deflate or none.`));
  }
  if (inflater) {
    req.on('error', (e) => inflater.destroy(e));
    stream = req.pipe(inflater);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err: Error | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      stream.removeListener('data', onData);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    // The body's deadline: a request counts towards the backlog while it is read, so one that trickles would hold its
    // place for as long as its sender likes.
    const deadline = setTimeout(() => {
      req.unpipe();
      inflater?.destroy();
      settle(
        new TraceInputError('too-slow', `The body did not arrive within ${timeoutMs / 1000} s of the headers; the connection is closed.`),
      );
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        req.unpipe();
        req.resume();
        inflater?.destroy();
        settle(
          new TraceInputError(
            'too-large',
            `The body is over ${(maxBytes / 1024 / 1024).toFixed(maxBytes < 1024 * 1024 ? 2 : 0)} MiB: export in smaller batches.`,
          ),
        );
        return;
      }
      chunks.push(chunk);
    };
    stream.on('data', onData);
    stream.once('end', () => settle(undefined));
    // Kept after settling: a request aborted later still emits its error, which must not go unheard.
    stream.on('error', (err: Error) =>
      settle(new TraceInputError('malformed', `The body could not be read (${encoding}): ${err.message}`)),
    );
  });
}
