/**
 * The trace store and the OTLP receiver (issue 25's targets, docs/traces.md):
 *
 * - **ingest**: 100,000 spans as 200 OTLP/JSON requests of 500 (and the same as protobuf) POSTed to the receiver,
 *   four at a time, into a fresh store: spans per second, target ≥ 5,000; and the receiver process's event loop
 *   (a 10 ms timer's largest lateness) while it stores them, target ≤ 20 ms;
 * - **a turn's spans at 1,000,000 spans**: a store of 20,000 traces of 50 spans (100 sessions × 200 turns, half
 *   linked by the run's ids, half by session and time), `spansOfTurn` for random turns, target ≤ 20 ms.
 *
 * The 1,000,000-span store is generated once into the bench cache (about half a minute here) and reused.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { OtlpReceiver } from '../../src/store/traces/otlpReceiver';
import type { SpanRecord } from '../../src/store/traces/spanRecord';
import { TraceStore } from '../../src/store/traces/traceStore';
import { median, round } from './measure';
import { StoreClient } from '../../src/store/worker/storeClient';

/** `branchLatencyMs` is ours, not the issue's: a branch's latency is read with its turns, so it stays within a frame or so. */
export const TRACE_TARGETS = { ingestSpansPerSecond: 5_000, ingestLoopLagMs: 20, turnSpansMs: 20, branchLatencyMs: 100 };
const STORE_VERSION = 1;
const T0 = 1_764_685_200_000_000;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** One OTLP/JSON request: `spans` GenAI-convention spans of one trace, a model request each with usage. */
function jsonRequest(trace: number, spans: number): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench-agent' } }] },
        scopeSpans: [
          {
            scope: { name: 'bench' },
            spans: Array.from({ length: spans }, (_, i) => ({
              traceId: hex(trace + 1, 32),
              spanId: hex(trace * 1000 + i + 1, 16),
              ...(i > 0 ? { parentSpanId: hex(trace * 1000 + 1, 16) } : {}),
              name: i === 0 ? 'invoke_agent Bench' : `chat gpt-4.1 #${i}`,
              kind: 3,
              startTimeUnixNano: `${T0 + trace * 10_000_000 + i * 1000}000`,
              endTimeUnixNano: `${T0 + trace * 10_000_000 + i * 1000 + 900}000`,
              attributes: [
                { key: 'gen_ai.operation.name', value: { stringValue: i === 0 ? 'invoke_agent' : 'chat' } },
                { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4.1' } },
                { key: 'gen_ai.usage.input_tokens', value: { intValue: String(800 + i) } },
                { key: 'gen_ai.usage.output_tokens', value: { intValue: '64' } },
                { key: 'gen_ai.conversation.id', value: { stringValue: `session-${trace % 50}` } },
              ],
            })),
          },
        ],
      },
    ],
  });
}

export interface IngestReport {
  where: 'thread' | 'worker';
  spans: number;
  requests: number;
  seconds: number;
  spansPerSecond: number;
  loopLagMaxMs: number;
  loopLagP99Ms: number;
}

/**
 * `thread`: the receiver decodes and stores in its own thread (the CLI's `otlp`); `worker`: it hands each body to the
 * store worker (the extension's way), so its thread only reads requests.
 */
async function ingest(dir: string, where: 'thread' | 'worker', workerFile: string): Promise<IngestReport> {
  const REQUESTS = 200;
  const PER = 500;
  const bodies = Array.from({ length: REQUESTS }, (_, i) => jsonRequest(i, PER));
  const path = join(dir, `ingest-${where}.db`);
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  const client = where === 'worker' ? new StoreClient(workerFile) : undefined;
  const local = where === 'thread' ? TraceStore.open(path) : undefined;
  const remote = client ? await client.openTraceStore(path) : undefined;
  const receiver = await OtlpReceiver.start({
    port: 0,
    ingest: (body, format) => (remote ? remote.call('ingestOtlp', body, format) : local!.ingestOtlp(body, format)),
  });
  const lag = monitorEventLoopDelay({ resolution: 10 });
  try {
    lag.enable();
    const started = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        if (res.status !== 200) throw new Error(`receiver answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const seconds = (performance.now() - started) / 1000;
    lag.disable();
    const spans = remote ? (await remote.call('counts')).spans : local!.counts().spans;
    if (spans !== REQUESTS * PER) throw new Error(`stored ${spans} spans, sent ${REQUESTS * PER}`);
    return {
      where,
      spans,
      requests: REQUESTS,
      seconds: round(seconds),
      spansPerSecond: Math.round(spans / seconds),
      // The histogram holds delays beyond the timer's own 10 ms resolution.
      loopLagMaxMs: round(lag.max / 1e6 - 10),
      loopLagP99Ms: round(lag.percentile(99) / 1e6 - 10),
    };
  } finally {
    await receiver.close();
    local?.close();
    await remote?.close();
    await client?.dispose();
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  }
}

const SESSIONS = 100;
const TURNS = 200;
const SPANS_PER_TRACE = 50;

/** The 1,000,000-span store: trace t is session t % 100's turn ⌊t / 100⌋ + 1; even traces carry the run's ids. */
function millionStore(dir: string, progress: (m: string) => void): string {
  const path = join(dir, `traces-1m-v${STORE_VERSION}.db`);
  if (existsSync(path)) return path;
  const building = `${path}.building`;
  rmSync(building, { force: true });
  const store = TraceStore.open(building);
  try {
    for (let t = 0; t < SESSIONS * TURNS;) {
      const batch: SpanRecord[] = [];
      for (const end = Math.min(t + 200, SESSIONS * TURNS); t < end; t++) {
        const session = `session-${t % SESSIONS}`;
        const turn = Math.floor(t / SESSIONS) + 1;
        const start = T0 + turn * 60_000_000;
        for (let i = 0; i < SPANS_PER_TRACE; i++)
          batch.push({
            traceId: hex(t + 1, 32),
            spanId: hex(t * 100 + i + 1, 16),
            parentSpanId: i === 0 ? null : hex(t * 100 + 1, 16),
            name: i === 0 ? 'invoke_agent Bench' : i % 2 ? `chat gpt-4.1` : `execute_tool lookup`,
            kind: i === 0 ? 'agent' : i % 2 ? 'model' : 'tool',
            spanKind: 1,
            startUs: start + i * 1000,
            endUs: start + i * 1000 + 900,
            status: 'ok',
            error: null,
            model: i % 2 ? 'gpt-4.1' : null,
            inputTokens: i % 2 ? 800 : null,
            outputTokens: i % 2 ? 64 : null,
            cachedTokens: null,
            reasoningTokens: null,
            toolName: i % 2 ? null : 'lookup',
            agentName: 'Bench',
            link: t % 2 === 0 ? { sessionId: session, branchId: 'main', turnNumber: turn } : { sessionId: session },
            source: 'otlp',
            service: 'bench-agent',
            attributes: { 'gen_ai.operation.name': i === 0 ? 'invoke_agent' : 'chat', n: i },
            resource: { 'service.name': 'bench-agent' },
            events: [],
            truncated: false,
          });
      }
      store.addSpans(batch);
      if (t % 4000 === 0) progress(`trace store: ${(t * SPANS_PER_TRACE).toLocaleString('en-US')} spans written`);
    }
  } finally {
    store.close();
  }
  rmSync(`${building}-wal`, { force: true });
  rmSync(`${building}-shm`, { force: true });
  renameSync(building, path);
  return path;
}

export interface TraceBenchReport {
  /** Into the store in the receiver's thread (the CLI). */
  ingest: IngestReport;
  /** Through the store worker (the extension): the receiver's thread only reads the requests. */
  ingestViaWorker: IngestReport;
  millionSpans: { spans: number; turnSpansMs: { median: number; max: number; reps: number }; spansPerTurn: number };
  /** `turnLatencies` for all of a session's turns in the same store (the turn list's and p50/p95's one read). */
  branchLatency: { turns: number; requests: number; ms: { median: number; max: number; reps: number } };
  targets: Record<string, { target: number; measured: number; met: boolean }>;
}

export async function runTraceBench(cacheDir: string, workerFile: string, progress: (m: string) => void): Promise<TraceBenchReport> {
  mkdirSync(cacheDir, { recursive: true });
  progress('traces: ingest through the receiver');
  const ing = await ingest(cacheDir, 'thread', workerFile);
  const viaWorker = await ingest(cacheDir, 'worker', workerFile);
  const path = millionStore(cacheDir, progress);
  const store = TraceStore.open(path, { readonly: true });
  const times: number[] = [];
  let spansPerTurn = 0;
  try {
    const spans = store.counts().spans;
    for (let rep = 0; rep < 60; rep++) {
      const session = rep % SESSIONS;
      const turn = 1 + ((rep * 37) % (TURNS - 1));
      const startUs = T0 + turn * 60_000_000 - 2_000_000;
      const t = performance.now();
      const got = store.spansOfTurn({
        sessionId: `session-${session}`,
        branchId: 'main',
        turnNumber: turn,
        window: { startUs, endUs: startUs + 60_000_000 },
      });
      times.push(performance.now() - t);
      spansPerTurn = got.length;
    }
    const warm = times.slice(10);
    const turnMs = { median: round(median(warm)), max: round(Math.max(...warm)), reps: warm.length };
    // A whole branch: every turn of a session with its window, as src/extension/traces/turnLatency.ts asks.
    const branchTimes: number[] = [];
    let branchRequests = 0;
    for (let rep = 0; rep < 25; rep++) {
      const turns = Array.from({ length: TURNS }, (_, i) => {
        const startUs = T0 + (i + 1) * 60_000_000 - 2_000_000;
        return { branchId: 'main', turnNumber: i + 1, window: { startUs, endUs: startUs + 60_000_000 } };
      });
      const t = performance.now();
      const got = store.turnLatencies(`session-${(rep * 7) % SESSIONS}`, turns);
      branchTimes.push(performance.now() - t);
      branchRequests = got.reduce((n, l) => n + l.requests, 0);
    }
    const branchWarm = branchTimes.slice(5);
    const branchMs = { median: round(median(branchWarm)), max: round(Math.max(...branchWarm)), reps: branchWarm.length };
    return {
      ingest: ing,
      ingestViaWorker: viaWorker,
      millionSpans: { spans, turnSpansMs: turnMs, spansPerTurn },
      branchLatency: { turns: TURNS, requests: branchRequests, ms: branchMs },
      targets: {
        // The extension's way: through the worker, the receiver's thread standing for the host's.
        ingestSpansPerSecond: {
          target: TRACE_TARGETS.ingestSpansPerSecond,
          measured: viaWorker.spansPerSecond,
          met: viaWorker.spansPerSecond >= TRACE_TARGETS.ingestSpansPerSecond,
        },
        ingestLoopLagMs: {
          target: TRACE_TARGETS.ingestLoopLagMs,
          measured: viaWorker.loopLagMaxMs,
          met: viaWorker.loopLagMaxMs <= TRACE_TARGETS.ingestLoopLagMs,
        },
        turnSpansMs: { target: TRACE_TARGETS.turnSpansMs, measured: turnMs.max, met: turnMs.max <= TRACE_TARGETS.turnSpansMs },
        branchLatencyMs: {
          target: TRACE_TARGETS.branchLatencyMs,
          measured: branchMs.max,
          met: branchMs.max <= TRACE_TARGETS.branchLatencyMs,
        },
      },
    };
  } finally {
    store.close();
  }
}
