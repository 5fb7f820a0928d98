/**
 * `agent-sessions otlp` (an OTLP/HTTP receiver writing into a trace store) and `agent-sessions traces` (import OTLP
 * JSON files, list a session's traces or the unlinked ones, export a session's spans as OTLP JSON). The trace store
 * is a file of its own (--store), never a session file.
 */
import { existsSync } from 'node:fs';
import { writeOutputFile } from '../store/files/tempFile';
import { parseOtlpJson } from '../store/traces/otlpRequest';
import { DEFAULT_OTLP_PORT, OtlpReceiver } from '../store/traces/otlpReceiver';
import { isLoopbackHost, isWildcardHost } from '../store/traces/receiverAddress';
import { exportOtlpJson } from '../store/traces/otlpExport';
import { spanRecordOf } from '../store/traces/spanConventions';
import type { SpanRecord } from '../store/traces/spanRecord';
import { TraceInputError } from '../store/traces/traceErrors';
import { TraceStore, type TraceSummary } from '../store/traces/traceStore';
import { NotFoundError, UsageError } from './exitCodes';
import type { CommandContext } from './commands';
import { readInputText } from './inputFiles';
import { counted, countNoun } from '../shared/countNoun';

/** A time as ISO 8601; one past what `Date` shows (a store written before times were bounded) as its microseconds. */
function iso(us: number): string {
  const date = new Date(us / 1000);
  return Number.isNaN(date.getTime()) ? `${us} µs` : date.toISOString();
}
/** A duration in whole milliseconds (Math.trunc: `| 0` wraps past 2^31 ms, 24.8 days, to negative ones). */
const ms = (us: number): string => `${Math.trunc(us / 1000).toLocaleString('en-US')} ms`;

/**
 * The trace store at `path`. Only what stores spans (`otlp`, `traces import`) creates it; reading one that is not there
 * is an error naming the path (exit 3), not a new empty file where a mistyped path would list nothing.
 */
function openStore(path: string | undefined, reading = false): TraceStore {
  if (!path) throw new UsageError('a trace store is needed: --store <file> (a file of its own, never a session file)');
  if (reading && !existsSync(path)) throw new NotFoundError(`There is no trace store ${path} (traces import or otlp creates one).`);
  return TraceStore.open(path);
}

/** `[host:]port` → where to listen. */
export function parseListen(value: string | undefined): { host: string; port: number } {
  if (value === undefined) return { host: '127.0.0.1', port: DEFAULT_OTLP_PORT };
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65_535) throw new UsageError(`--listen takes [host:]port, got '${value}'`);
  return { host: m[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1', port };
}

export interface OtlpCommandOptions {
  store?: string;
  listen?: string;
  maxSpans?: number;
  maxAgeDays?: number;
  /** Where the receiver's log lines go (stderr: stdout stays free for --json). */
  log: (line: string) => void;
}

/** Runs the receiver until the signal aborts (Ctrl+C); returns the counts it stored. */
export async function otlpCommand(ctx: CommandContext, options: OtlpCommandOptions): Promise<string> {
  const store = openStore(options.store);
  const { host, port } = parseListen(options.listen);
  let spans = 0;
  let requests = 0;
  const retention = { maxSpans: options.maxSpans, maxAgeDays: options.maxAgeDays };
  try {
    const receiver = await OtlpReceiver.start({
      host,
      port,
      ingest: (body, format) => store.ingestOtlp(body, format, 'otlp'),
      onBatch: (b) => {
        requests++;
        spans += b.spans;
        if (b.status !== 200) options.log(`refused a request (${b.status}): ${b.error ?? ''}`);
        else
          options.log(
            `stored ${counted(b.spans, 'span')}${b.services.length ? ` from ${b.services.join(', ')}` : ''}` +
              (b.rejected ? `; ${b.rejected} rejected: ${b.reasons.join('; ')}` : ''),
          );
      },
    });
    options.log(`receiving OTLP traces at ${receiver.url} (JSON or protobuf) into ${store.path}; Ctrl+C stops`);
    if (!isLoopbackHost(host))
      options.log(
        `note: listening on ${host}, so other machines can send spans here; there is no authentication` +
          // The Host check (receiverAddress.ts) refuses DNS names on a wildcard address: only a name can be rebound.
          (isWildcardHost(host) ? '; exporters must address this machine by an IP address (a DNS name gets 421)' : ''),
      );
    // Retention every minute while receiving, and once at the end.
    const timer = setInterval(() => store.prune(retention), 60_000);
    try {
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      clearInterval(timer);
      await receiver.close();
    }
    store.prune(retention);
    const counts = store.counts();
    return ctx.json
      ? `${JSON.stringify({ requests, spans, store: counts })}\n`
      : `stopped: ${counted(spans, 'span')} in ${counted(requests, 'request')}; the store holds ${counted(counts.spans, 'span')} in ${counted(counts.traces, 'trace')}\n`;
  } finally {
    store.close();
  }
}

function traceLine(t: TraceSummary): string {
  const where = t.sessionId ? `${t.sessionId}${t.branchId ? ` ${t.branchId} turn ${t.turnNumber}` : ''} (${t.linkedBy})` : 'unlinked';
  return `${t.traceId}  ${iso(t.startUs)}  ${ms(t.endUs - t.startUs).padStart(10)}  ${String(t.spanCount).padStart(5)} ${countNoun(t.spanCount, 'span').padEnd(5)}  ${where}`;
}

/**
 * `traces ls --session S --branch B`: the branch's traces, then those linked to the session but to no branch, under a
 * note of their own. Such a trace belongs to whichever turn's window it starts in (docs/traces.md), which only the
 * session file tells: listed as the branch's, it may be another branch's.
 */
function branchTraces(store: TraceStore, sessionId: string, branchId: string, traces: TraceSummary[]): string {
  const listed = traces.length > 0 ? `${traces.map(traceLine).join('\n')}\n` : `no traces for session ${sessionId} on branch ${branchId}\n`;
  const sessionOnly = store.tracesOfSession(sessionId, { branchId: null });
  if (sessionOnly.length === 0) return listed;
  return `${listed}\nlinked to session ${sessionId} but to no branch (a turn's Timeline finds them by when they start):\n${sessionOnly.map(traceLine).join('\n')}\n`;
}

export interface TracesCommandOptions {
  store?: string;
  session?: string;
  branch?: string;
  output?: string;
  unlinked?: boolean;
  /** Replace an existing -o file (never the store itself). */
  force?: boolean;
}

interface OtlpFile {
  file: string;
  records: SpanRecord[];
  rejected: number;
  reasons: string[];
}

/** The spans of each OTLP JSON file, each within its bound; a file that is not OTLP names itself in the error. */
function readOtlpFiles(args: string[]): OtlpFile[] {
  if (args.length === 0) throw new UsageError('traces import needs one or more OTLP JSON files');
  return args.map((file) => {
    let batch;
    try {
      batch = parseOtlpJson(readInputText(file, 'otlp'));
    } catch (err) {
      if (err instanceof TraceInputError)
        throw new TraceInputError(err.problem, `${file}: ${err.message}${/[.!?]$/.test(err.message) ? '' : '.'} Nothing was imported.`);
      throw err;
    }
    return {
      file,
      records: batch.spans.map((s) => spanRecordOf(s, 'import')),
      rejected: batch.rejected.count,
      reasons: batch.rejected.reasons,
    };
  });
}

/** `traces import <file…>`, `traces ls`, `traces show <trace>`, `traces export`. */
export function tracesCommand(ctx: CommandContext, action: string | undefined, args: string[], options: TracesCommandOptions): string {
  if (action !== 'import' && action !== 'ls' && action !== 'show' && action !== 'export')
    throw new UsageError(`traces needs an action: import, ls, show or export${action ? ` (got '${action}')` : ''}`);
  // Every file of an import is read and checked before the store is opened, and all of them go in one transaction: a
  // bad file among several stores nothing (and creates no store), where importing file by file left the ones before it
  // stored behind an error.
  const files = action === 'import' ? readOtlpFiles(args) : [];
  const store = openStore(options.store, action !== 'import');
  try {
    switch (action) {
      case 'import': {
        store.addSpans(files.flatMap((f) => f.records));
        const results = files.map((f) => ({
          file: f.file,
          spans: f.records.length,
          traces: new Set(f.records.map((r) => r.traceId)).size,
          rejected: f.rejected,
          reasons: f.reasons,
        }));
        if (ctx.json) return `${JSON.stringify(results)}\n`;
        return results
          .map(
            (r) =>
              `${r.file}: ${counted(r.spans, 'span')} in ${counted(r.traces, 'trace')}${r.rejected ? `; ${r.rejected} rejected: ${r.reasons.join('; ')}` : ''}\n`,
          )
          .join('');
      }
      case 'ls': {
        if (args.length > 0) throw new UsageError('traces ls takes no arguments (--session, --branch, --unlinked)');
        const traces = options.unlinked
          ? store.unlinkedTraces(1000)
          : options.session
            ? store.tracesOfSession(options.session, { branchId: options.branch })
            : undefined;
        if (!traces) throw new UsageError('traces ls needs --session <id> or --unlinked');
        if (ctx.json) return `${JSON.stringify(traces)}\n`;
        if (!options.unlinked && options.branch !== undefined) return branchTraces(store, options.session!, options.branch, traces);
        if (traces.length === 0) return options.unlinked ? 'no unlinked traces\n' : `no traces for session ${options.session}\n`;
        const reason = options.unlinked && 'reason' in traces[0]! ? `\nunlinked: ${(traces[0] as { reason: string }).reason}\n` : '';
        return `${traces.map(traceLine).join('\n')}\n${reason}`;
      }
      case 'show': {
        if (args.length !== 1) throw new UsageError('traces show needs one trace id');
        const trace = store.trace(args[0]!.toLowerCase());
        if (!trace) throw new NotFoundError(`there is no trace ${args[0]} in ${store.path}`);
        const spans = store.spansOfTrace(trace.traceId);
        if (ctx.json) return `${JSON.stringify({ trace, spans })}\n`;
        const depth = new Map<string, number>();
        const lines = spans.map((s) => {
          const d = s.parentSpanId && depth.has(s.parentSpanId) ? depth.get(s.parentSpanId)! + 1 : 0;
          depth.set(s.spanId, d);
          const detail = [
            s.model,
            s.toolName,
            s.inputTokens !== null ? `${s.inputTokens} in / ${s.outputTokens ?? 0} out` : null,
            s.error ? `error: ${s.error}` : null,
          ].filter(Boolean);
          return `${'  '.repeat(d)}${s.kind.padEnd(9)} ${s.name}  +${ms(s.startUs - trace.startUs)}  ${ms(s.endUs - s.startUs)}${detail.length ? `  (${detail.join(', ')})` : ''}`;
        });
        return `${traceLine(trace)}\n${lines.join('\n')}\n`;
      }
      case 'export': {
        if (!options.session) throw new UsageError('traces export needs --session <id>');
        const traces = store.tracesOfSession(options.session, { branchId: options.branch });
        const body = JSON.stringify(exportOtlpJson(traces.flatMap((t) => store.spansOfTrace(t.traceId))));
        if (options.output) {
          writeOutputFile(options.output, body, { overwrite: options.force, inputs: [store.path] });
          return ctx.json
            ? `${JSON.stringify({ output: options.output, traces: traces.length })}\n`
            : `wrote ${counted(traces.length, 'trace')} to ${options.output}\n`;
        }
        return `${body}\n`;
      }
    }
  } finally {
    store.close();
  }
}
