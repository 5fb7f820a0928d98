/**
 * The doctor bench (issue 45): a full check of a big session file (`agent-sessions doctor FILE`: integrity_check and
 * every kind's query) against its floor, a full scan of the file's tables (scripts/bench/doctorRun.ts says what
 * each does), on both drivers: better-sqlite3 under this Node, node:sqlite under a Node 22 from the tools' cache.
 * Target: the check within 1.5× the floor, memory bounded (the check's peak RSS not above the floor's by more than
 * a fixed margin, whatever the file's size).
 *
 * Each measurement is its own child process (its peak RSS is its own), floor and check alternating so both see the
 * same page cache and load; the ratio is of CPU time taken in each child around the work alone (wall time is
 * reported too, but on a shared machine it measures the neighbours). The file is file A (100,000 turns, 712 MB, the
 * largest the bench generates) unless `--doctor-file` names another; it is only read.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, round } from './measure';
import { ensureScaleFile } from './scaleFiles';

/** The Node whose node:sqlite the second driver's runs use (one of the store suites' versions, in the tools' cache). */
export const DOCTOR_SQLITE_NODE = '22.22.1';
/** The target: a full check within this many times the full scan. */
export const DOCTOR_TARGET_RATIO = 1.5;
/** How much more than the floor's peak RSS the check may take and still count as bounded. */
export const DOCTOR_MEMORY_MARGIN_MB = 64;

export interface DoctorRun {
  mode: 'check' | 'floor';
  driver: string;
  node: string;
  wallMs: number;
  cpuMs: number;
  peakRssMB: number;
  findings?: number;
  rows?: number;
}

export interface DoctorDriverReport {
  driver: string;
  node: string;
  runs: { floor: DoctorRun; check: DoctorRun; cpuRatio: number; wallRatio: number }[];
  medianCpuRatio: number;
  medianWallRatio: number;
  peakRssMB: { floor: number; check: number };
}

export interface DoctorBenchReport {
  file: { path: string; bytes: number };
  loadAverage: { before: number[]; after: number[] };
  drivers: DoctorDriverReport[];
  skipped: string[];
  target: { ratio: number; memoryMarginMB: number; worstCpuRatio: number; met: boolean };
}

const ROOT = join(__dirname, '..', '..');

function runChild(node: string, driver: string, mode: 'check' | 'floor', file: string): Promise<DoctorRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['--no-warnings', '--import', 'tsx', join(__dirname, 'doctorRun.ts'), mode, file], {
      cwd: ROOT,
      env: { ...process.env, AGENT_SESSION_SQLITE_DRIVER: driver },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`doctor bench ${mode} (${driver}) exited ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as DoctorRun);
    });
  });
}

export async function runDoctorBench(
  options: { cacheDir: string; file?: string; runs: number },
  progress: (m: string) => void,
): Promise<DoctorBenchReport> {
  const path = options.file ?? ensureScaleFile(options.cacheDir, 'A', 1, progress).path;
  const os = await import('node:os');
  const before = os.loadavg().map((x) => round(x));
  const { nodePaths } = (await import(pathToFileURL(join(ROOT, 'scripts', 'host', 'hostTools.mjs')).href)) as {
    nodePaths(version: string): { bin: string };
  };
  const nodes = [{ driver: 'better-sqlite3', node: process.execPath }];
  const skipped: string[] = [];
  const node22 = nodePaths(DOCTOR_SQLITE_NODE).bin;
  if (existsSync(node22)) nodes.push({ driver: 'node:sqlite', node: node22 });
  else skipped.push(`node:sqlite: no Node ${DOCTOR_SQLITE_NODE} in the tools' cache (${node22})`);
  const drivers: DoctorDriverReport[] = [];
  for (const { driver, node } of nodes) {
    const runs: DoctorDriverReport['runs'] = [];
    for (let i = 0; i < options.runs; i++) {
      progress(`doctor (${driver}) run ${i + 1} of ${options.runs}: floor`);
      const floor = await runChild(node, driver, 'floor', path);
      progress(`doctor (${driver}) run ${i + 1} of ${options.runs}: check`);
      const check = await runChild(node, driver, 'check', path);
      runs.push({ floor, check, cpuRatio: round(check.cpuMs / floor.cpuMs), wallRatio: round(check.wallMs / floor.wallMs) });
    }
    drivers.push({
      driver,
      node: runs[0]?.check.node ?? node,
      runs,
      medianCpuRatio: median(runs.map((r) => r.cpuRatio)),
      medianWallRatio: median(runs.map((r) => r.wallRatio)),
      peakRssMB: { floor: Math.max(...runs.map((r) => r.floor.peakRssMB)), check: Math.max(...runs.map((r) => r.check.peakRssMB)) },
    });
  }
  const worst = Math.max(...drivers.map((d) => d.medianCpuRatio));
  const bounded = drivers.every((d) => d.peakRssMB.check <= d.peakRssMB.floor + DOCTOR_MEMORY_MARGIN_MB);
  return {
    file: { path, bytes: statSync(path).size },
    loadAverage: { before, after: os.loadavg().map((x) => round(x)) },
    drivers,
    skipped,
    target: {
      ratio: DOCTOR_TARGET_RATIO,
      memoryMarginMB: DOCTOR_MEMORY_MARGIN_MB,
      worstCpuRatio: worst,
      met: worst <= DOCTOR_TARGET_RATIO && bounded && skipped.length === 0,
    },
  };
}

/** The section's lines for stderr. */
export function doctorTable(r: DoctorBenchReport): string {
  const lines = [`doctor: full check vs full scan of ${r.file.path} (${Math.round(r.file.bytes / 1e6)} MB)`];
  for (const d of r.drivers) {
    const runs = d.runs.map((x) => `${x.check.cpuMs}/${x.floor.cpuMs} ms CPU = ${x.cpuRatio}× (wall ${x.wallRatio}×)`).join(' · ');
    lines.push(
      `  ${d.driver} (Node ${d.node}): ${runs}; median ${d.medianCpuRatio}×; peak RSS check ${d.peakRssMB.check} MB, floor ${d.peakRssMB.floor} MB`,
    );
  }
  for (const s of r.skipped) lines.push(`  skipped: ${s}`);
  lines.push(
    `  load average ${r.loadAverage.before.join(' ')} → ${r.loadAverage.after.join(' ')}; target ≤ ${r.target.ratio}×: ${r.target.met ? 'met' : 'not met'}`,
  );
  return lines.join('\n');
}
