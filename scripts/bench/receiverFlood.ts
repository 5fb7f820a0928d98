/**
 * What a flood costs the OTLP receiver (docs/traces.md, "Bounds"): `agent-sessions otlp` from dist/cli.js in a process
 * of its own, sent one gzip body that inflates to 32 MiB of empty spans (JSON's `{},` repeated, or protobuf's empty
 * `ResourceSpans`: about 11 and 16 million values), and one just under the values bound (4,000,000) that it takes. For
 * each: the answer, the time to it, and the receiver's peak RSS (the kernel's high-water mark, `VmHWM`, read before
 * the process ends), next to its RSS at rest before the request. Run after `npm run build`:
 *
 *   nice -n 10 npx tsx scripts/bench/receiverFlood.ts [--runs 3] [--cli OTHER_TREE/dist/cli.js]
 *
 * Prints JSON.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(__dirname, '..', '..');
/** The CLI measured: this tree's build, or another's (`--cli`, to compare two trees). */
const CLI = process.argv.includes('--cli') ? resolve(process.argv[process.argv.indexOf('--cli') + 1]!) : join(ROOT, 'dist', 'cli.js');
const MIB32 = 32 * 1024 * 1024 - 64;

/** A body's text and its content type: the flood of each encoding, and one just under the values bound. */
function bodies(): { name: string; body: Buffer; type: string }[] {
  const emptySpans = Math.floor((MIB32 - 60) / 3);
  const protobuf = Buffer.alloc(MIB32 - (MIB32 % 2));
  // Field 1 (resourceSpans), length 0: an empty message, two bytes, counted as two values.
  for (let i = 0; i < protobuf.length; i += 2) protobuf[i] = 0x0a;
  const json = (spans: number) => Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[${'{},'.repeat(spans - 1)}{}]}]}]}`);
  return [
    { name: 'json, 32 MiB of empty spans', body: json(emptySpans), type: 'application/json' },
    { name: 'protobuf, 32 MiB of empty messages', body: protobuf, type: 'application/x-protobuf' },
    // Each empty span is two values (its `{` and the `,` after it): 1,999,990 of them and the wrappers, 3,999,986.
    { name: 'json, just under 4,000,000 values', body: json(1_999_990), type: 'application/json' },
  ];
}

const status = (pid: number, key: string): number =>
  Number(new RegExp(`${key}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

function post(port: number, body: Buffer, type: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/v1/traces', method: 'POST', headers: { 'content-type': type, 'content-encoding': 'gzip' } },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

/** Starts the receiver on a free port; resolves with the process and its port once it says it is receiving. */
function startReceiver(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [CLI, 'otlp', '--store', join(dir, 'traces.db'), '--listen', '127.0.0.1:0'], {
    env: { ...process.env, XDG_CACHE_HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((done, fail) => {
    let said = '';
    const hear = (d: Buffer) => {
      said += d.toString();
      const port = /receiving OTLP traces at http:\/\/127\.0\.0\.1:(\d+)/.exec(said)?.[1];
      if (port) done({ child, port: Number(port) });
    };
    child.stdout!.on('data', hear);
    child.stderr!.on('data', hear);
    child.on('exit', () => fail(new Error(`the receiver ended: ${said}`)));
  });
}

async function main(): Promise<void> {
  const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3;
  const results: Record<string, { answer: number; ms: number; restMb: number; peakMb: number }[]> = {};
  const load = { before: loadavg().map((l) => Number(l.toFixed(2))), after: [] as number[] };
  for (const { name, body, type } of bodies()) {
    const wire = gzipSync(body, { level: 9 });
    for (let run = 0; run < runs; run++) {
      const dir = mkdtempSync(join(tmpdir(), 'asi-flood-'));
      const { child, port } = await startReceiver(dir);
      try {
        const restMb = status(child.pid!, 'VmRSS');
        const started = performance.now();
        const answer = await post(port, wire, type);
        const ms = Math.round(performance.now() - started);
        (results[`${name} (${Math.round(wire.length / 1024)} KB gzip)`] ??= []).push({
          answer,
          ms,
          restMb: Math.round(restMb),
          peakMb: Math.round(status(child.pid!, 'VmHWM')),
        });
      } finally {
        child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  load.after = loadavg().map((l) => Number(l.toFixed(2)));
  process.stdout.write(`${JSON.stringify({ node: process.version, load, results }, null, 2)}\n`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
