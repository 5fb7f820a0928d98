// `npm test`: every check the project has, with one summary at the end.
//   lint, format (Prettier), types, build + package (VSIX) → unit (Node 20, better-sqlite3), remote (Node 20, against
//   real PostgreSQL and Redis servers the tests start on free 127.0.0.1 ports), store suites on node:sqlite on each
//   extension-host Node (22.15.1, 22.17.0, 22.22.1, 24.15.0) → for each real host (code-server 4.103.2 = VS Code 1.103
//   on Node 22.17.0, 4.139.1 = VS Code 1.139 on Node 24.15.0): integration inside its extension host, then UI tests
//   in Chromium against the packaged extension.
// Whatever a phase needs beyond `npm install` (Node versions, code-server, Chromium, build tools, Debian's postgresql
// and redis-server) is installed on first use: into the per-user cache (scripts/host/hostTools.mjs' CACHE, by default
// ~/.cache/agent-session-inspector), or by apt-get for Debian packages. Those installs start in the background
// (niced child processes) as soon as the run starts, while the first phases run; a phase waits only for what it
// needs, and fails with the reason when that cannot be installed.
//
// Scheduling (docs/architecture.md, "Tests: which run where, and why"): up to ASI_TEST_JOBS phases (default: 2, or 1
// on a single core) run at the same time. Phases after `build` wait for it (and are not run when it fails). The
// integration and UI phases form one lane: one at a time, in order (both in-host suites, then both UI suites; a phase
// whose host is still being installed lets the next one go first), and they go first whenever a slot is free, since
// the lane is the longest path; the other phases fill the other slot at
// the lowest CPU priority (nice 19): a browser waiting on a workbench is the one thing here that a busy CPU turns into
// a failure, and at nice 19 a phase beside it gets only what the workbench leaves (a weight of 15 against 1024).
// Output stays readable: each phase's output is one block under its name, in the order
// the phases started; the oldest running phase streams live and the others are buffered until it ends.
//
// A failing phase does not stop the other phases (so one run reports everything), but the exit code is non-zero
// when anything failed (or when test phases ran and nothing passed). The last line is "total: N passed, N failed,
// N skipped".
//   npm test                      everything
//   npm test -- unit store-22.15.1 ui-vscode-1.139     only the phases named
//   ASI_TEST_JOBS=1 npm test      one phase at a time, in the order above
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BROWSER_PACKAGES, HOSTS, STORE_NODE_VERSIONS, codeServerDebianPackages, hostById } from './host/hostTools.mjs';
import { SERVER_PACKAGES } from './host/servers.mjs';
import { waitsInLane } from './host/laneOrder.mjs';
import { seedPrebuildCache } from './host/prebuildCache.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const countsDir = mkdtempSync(join(tmpdir(), 'asi-counts-'));
const only = process.argv.slice(2);
const JOBS = Math.max(1, Math.floor(Number(process.env.ASI_TEST_JOBS)) || Math.min(2, availableParallelism()));
const t0 = Date.now();
const secondsSince = (t) => (Date.now() - t) / 1000;

const npx = (...args) => ['npx', ['--no-install', ...args]];
/** The integration and UI phases: one at a time, in order. */
const WORKBENCH = 'workbench';
const phases = [
  { name: 'lint', cmd: npx('eslint', '.', '--max-warnings=0'), tests: false },
  { name: 'format', cmd: npx('prettier', '--check', '.'), tests: false },
  { name: 'types', cmd: ['npm', ['run', '--silent', 'typecheck']], tests: false },
  { name: 'build', cmd: ['npm', ['run', '--silent', 'package']], tests: false, gate: true },
  { name: 'unit', cmd: npx('mocha'), env: { ASI_TEST_PHASE: 'unit (Node 20, better-sqlite3)' } },
  {
    name: 'remote',
    cmd: npx('mocha', '--config', 'test/remote/.mocharc.json'),
    env: { ASI_TEST_PHASE: 'remote (Node 20, PostgreSQL + Redis)' },
    needs: ['servers'],
  },
  ...STORE_NODE_VERSIONS.map((v) => ({
    name: `store-${v}`,
    cmd: ['node', ['scripts/runStoreSuites.mjs', v]],
    needs: [`node:${v}`],
  })),
  // The in-host suites of both hosts first: they can share the machine with the unit and store suites.
  ...HOSTS.map((host) => ({
    name: `integration-${host.id}`,
    cmd: ['node', ['--import', 'tsx', 'test/host/runInHost.ts', '--timeout', '600']],
    env: { ASI_HOST: host.id, ASI_TEST_PHASE: `integration (${host.id}, Node ${host.node}, node:sqlite)` },
    // The launcher starts PostgreSQL and Redis for the server-store tests.
    needs: ['servers', `host:${host.id}`],
    lane: WORKBENCH,
  })),
  // The UI suites drive a browser against a workbench and wait on what it draws: the phase beside them runs at nice 19,
  // so its CPU use cannot turn a wait into a timeout. One theme a host, every spec in it: light on the newest, dark on
  // the others, so each spec meets both themes in a run (docs/architecture.md, "Tests"; `ASI_UI_THEMES=light,dark`
  // draws both, as the docs' dark screenshots need).
  ...HOSTS.map((host, i) => ({
    name: `ui-${host.id}`,
    cmd: npx('mocha', '--config', 'test/e2e/.mocharc.json'),
    env: {
      ASI_HOST: host.id,
      ASI_TEST_PHASE: `ui (${host.id}, Chromium)`,
      ASI_UI_THEMES: process.env.ASI_UI_THEMES ?? (i < HOSTS.length - 1 ? 'dark' : 'light'),
    },
    needs: ['servers', `host:${host.id}`],
    lane: WORKBENCH,
  })),
];
const unknown = only.filter((n) => !phases.some((p) => p.name === n));
if (unknown.length > 0) {
  console.error(`Unknown phase(s): ${unknown.join(', ')}. Phases: ${phases.map((p) => p.name).join(', ')}`);
  process.exit(64);
}
const selected = phases.filter((p) => only.length === 0 || only.includes(p.name));
const gate = selected.find((p) => p.gate);
for (const p of selected) p.afterGate = gate !== undefined && phases.indexOf(p) > phases.indexOf(gate);
// Which ready phase gets a free slot first: the gate (everything after it waits for it), then the workbench lane (the
// longest path through the run), then the rest in the order above.
const byPriority = [...selected].sort(
  (a, b) => (a.gate ? 0 : a.lane ? 1 : 2) - (b.gate ? 0 : b.lane ? 1 : 2) || phases.indexOf(a) - phases.indexOf(b),
);

// ── output: one block per phase, in start order; the oldest running one streams live ──────────────────────────────

const blocks = [];
let shown = 0;
function openBlock(title) {
  const block = { title, chunks: [], done: false, headed: false };
  blocks.push(block);
  pump();
  return block;
}
function write(block, stream, data) {
  if (blocks[shown] === block) stream.write(data);
  else block.chunks.push([stream, data]);
}
function closeBlock(block, footer) {
  if (footer) block.chunks.push([process.stdout, `${footer}\n`]);
  block.done = true;
  pump();
}
function pump() {
  while (shown < blocks.length) {
    const block = blocks[shown];
    if (!block.headed) {
      process.stdout.write(`\n━━━ ${block.title} ━━━\n`);
      block.headed = true;
    }
    for (const [stream, data] of block.chunks.splice(0)) stream.write(data);
    if (!block.done) return;
    shown++;
  }
}

// ── child processes ──────────────────────────────────────────────────────────────────────────────────────────────

const children = new Set();
let interrupted;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    interrupted = sig;
    for (const child of children) {
      try {
        // Each child leads its own process group (npx and npm in between would not pass the signal on).
        process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    }
  });
}

/** Runs a command with its output into `onData`; resolves with { code, signal, error }. */
function run(cmd, args, { env, onData, nice = 0 }) {
  return new Promise((resolve) => {
    // detached: its own process group, which an interrupt above stops as a whole.
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(child);
    if (nice > 0 && child.pid) {
      try {
        // Yields the CPU (the child's processes inherit the priority): installs to the phases, phases to the lane.
        setPriority(child.pid, nice);
      } catch {
        // not allowed here: run at normal priority
      }
    }
    child.stdout.on('data', (d) => onData(process.stdout, d));
    child.stderr.on('data', (d) => onData(process.stderr, d));
    let error;
    child.on('error', (err) => (error = err));
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, error });
    });
  });
}

// ── installs, started at once in the background ──────────────────────────────────────────────────────────────────

const installs = new Map();
/** Installs `need` (see hostTools' ensureNeed) after `after` (other installs) settle; resolves with { ok, why }. */
function install(need, after = []) {
  if (!installs.has(need)) {
    const entry = { need, seconds: 0, output: '' };
    entry.promise = Promise.allSettled(after).then(async () => {
      if (interrupted) return { ok: false, why: `not installed (${interrupted})` };
      const started = Date.now();
      const chunks = [];
      const errors = [];
      entry.running = true;
      const r = await run('node', [join(root, 'scripts', 'host', 'hostTools.mjs'), 'ensure', need], {
        nice: 10,
        onData: (stream, d) => {
          chunks.push(d);
          if (stream === process.stderr) errors.push(d);
        },
      });
      entry.running = false;
      entry.seconds = secondsSince(started);
      entry.output = Buffer.concat(chunks).toString('utf8');
      const ok = r.code === 0 && !r.error;
      entry.ok = ok;
      // Already there: nothing printed. Installed, or failed: one block with what it said.
      if (entry.output.trim() || !ok) {
        const block = openBlock(`install ${need}`);
        write(block, process.stdout, entry.output);
        closeBlock(block, `(install ${need}: ${ok ? 'done' : 'FAILED'} after ${entry.seconds.toFixed(1)} s)`);
      }
      // The reason: the first line of what the install printed on stderr (InstallError's message says what and how).
      const stderrLines = Buffer.concat(errors).toString('utf8').split('\n');
      const why = r.error?.message ?? (stderrLines.find((l) => l.trim() && !/^Waiting for /.test(l)) || `exit ${r.code ?? r.signal}`);
      return ok ? { ok } : { ok, why };
    });
    installs.set(need, entry);
  }
  return installs.get(need).promise;
}

function startInstalls() {
  const needs = [...new Set(selected.flatMap((p) => p.needs ?? []))];
  if (needs.length === 0) return;
  // One apt-get for every Debian package the selected phases need (the needs below then find them installed).
  const debian = new Set();
  for (const need of needs) {
    if (need === 'servers') SERVER_PACKAGES.forEach((p) => debian.add(p));
    if (need.startsWith('host:')) [...BROWSER_PACKAGES, ...codeServerDebianPackages(hostById(need.slice(5)))].forEach((p) => debian.add(p));
  }
  const apt = debian.size > 0 ? [install(`debian:${[...debian].join(',')}`)] : [];
  // Node versions: downloads, side by side.
  const hostNodes = needs.filter((n) => n.startsWith('host:')).map((n) => `node:${hostById(n.slice(5)).node}`);
  for (const need of new Set([...needs.filter((n) => n.startsWith('node:')), ...hostNodes])) install(need);
  if (needs.includes('servers')) install('servers', apt);
  // code-server builds native modules: one host at a time, in the lane's order.
  let previous = [];
  for (const need of needs.filter((n) => n.startsWith('host:'))) {
    const node = installs.get(`node:${hostById(need.slice(5)).node}`).promise;
    previous = [install(need, [...apt, node, ...previous])];
  }
}

// ── phases ───────────────────────────────────────────────────────────────────────────────────────────────────────

function readCounts(file) {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  return lines
    .map((l) => JSON.parse(l))
    .reduce(
      (a, c) => ({
        passed: a.passed + c.passed,
        failed: a.failed + c.failed,
        skipped: a.skipped + c.skipped,
        failures: [...a.failures, ...(c.failures ?? [])],
      }),
      { passed: 0, failed: 0, skipped: 0, failures: [] },
    );
}

async function runPhase(phase) {
  const block = openBlock(phase.name);
  const started = Date.now();
  // Each phase its own counts file: phases running side by side must not take each other's counts.
  const countsFile = join(countsDir, `${phase.name}.jsonl`);
  const [cmd, args] = phase.cmd;
  const r = await run(cmd, args, {
    env: { ...phase.env, ASI_TEST_COUNTS: countsFile },
    // Beside the workbench lane, every other phase yields the CPU to it (the header says why).
    nice: phase.lane ? 0 : 19,
    onData: (stream, d) => write(block, stream, d),
  });
  if (r.error) write(block, process.stderr, `${phase.name}: could not start ${cmd}: ${r.error.message}\n`);
  const seconds = secondsSince(started);
  const ok = r.code === 0 && !r.error;
  const exit = `exit ${r.code ?? r.signal ?? r.error?.code}`;
  const common = { name: phase.name, start: (started - t0) / 1000, seconds };
  let result;
  if (phase.tests === false) {
    result = { ...common, status: ok ? 'ok' : `FAILED (${exit})`, failed: ok ? 0 : 1, passed: 0, skipped: 0 };
  } else {
    const counts = readCounts(countsFile);
    // A runner that died before reporting (timeout, crash) counts as one failure, never as zero tests.
    const failed = counts.failed + (!ok && counts.failed === 0 ? 1 : 0);
    result = {
      ...common,
      ran: true,
      status: `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${ok ? '' : ` (${exit})`}`,
      passed: counts.passed,
      failed,
      skipped: counts.skipped,
      failures: counts.failures,
    };
  }
  closeBlock(block, `(${phase.name}: ${result.status}, ${seconds.toFixed(1)} s)`);
  return result;
}

const results = new Map();
const state = new Map(selected.map((p) => [p.name, 'pending']));
let free = JOBS;
const laneBusy = new Set();

function finish(phase, result) {
  results.set(phase.name, result);
  state.set(phase.name, 'done');
}

function schedule() {
  const gateState = gate ? state.get(gate.name) : 'done';
  const gateFailed = gate !== undefined && gateState === 'done' && results.get(gate.name).failed > 0;
  for (const phase of byPriority) {
    if (state.get(phase.name) !== 'pending') continue;
    if (interrupted) {
      finish(phase, { name: phase.name, status: `not run (${interrupted})`, failed: 1 });
      continue;
    }
    if (phase.afterGate && gateFailed) {
      finish(phase, { name: phase.name, status: `not run (${gate.name} failed)`, failed: 1 });
      continue;
    }
    if (phase.afterGate && gateState !== 'done') continue;
    if (phase.needsReady === undefined) {
      // Waits for its installs without taking a slot.
      phase.needsReady = Promise.all((phase.needs ?? []).map((n) => installs.get(n)?.promise ?? install(n)));
      phase.needsReady.then((outcomes) => {
        const failedNeed = outcomes.find((o) => !o.ok);
        phase.installFailure = failedNeed ? failedNeed.why : null;
        schedule();
      });
    }
    if (phase.installFailure === undefined) continue;
    if (phase.installFailure !== null) {
      const block = openBlock(phase.name);
      closeBlock(block, `${phase.name}: cannot run: ${phase.installFailure}`);
      finish(phase, {
        name: phase.name,
        status: `FAILED (could not install what it needs: ${phase.installFailure})`,
        failed: 1,
        passed: 0,
        skipped: 0,
      });
      continue;
    }
    // In order within the lane, but past a phase still waiting for its installs (laneOrder.mjs says why).
    if (phase.lane && (laneBusy.has(phase.lane) || waitsInLane(phase, selected, (name) => state.get(name)))) continue;
    if (free === 0) continue;
    free -= 1;
    if (phase.lane) laneBusy.add(phase.lane);
    state.set(phase.name, 'running');
    runPhase(phase).then((result) => {
      free += 1;
      if (phase.lane) laneBusy.delete(phase.lane);
      finish(phase, result);
      schedule();
    });
  }
  if ([...state.values()].every((s) => s === 'done')) done();
}

function done() {
  rmSync(countsDir, { recursive: true, force: true });
  const ordered = selected.map((p) => results.get(p.name));
  const wall = secondsSince(t0);
  const s = (n) => (n === undefined ? '' : `${n.toFixed(1)} s`);
  console.log('\n━━━ summary ━━━');
  console.log(`${'phase'.padEnd(26)} ${'wall'.padStart(9)} ${'started'.padStart(9)}  result`);
  for (const r of ordered) console.log(`${r.name.padEnd(26)} ${s(r.seconds).padStart(9)} ${s(r.start).padStart(9)}  ${r.status}`);
  const busy = ordered.reduce((a, r) => a + (r.seconds ?? 0), 0);
  const installed = [...installs.values()].filter((i) => i.ok && i.output.trim());
  console.log(
    `wall time ${s(wall)} (with ${JOBS} at a time; the phases' own times add up to ${s(busy)})` +
      (installed.length > 0
        ? `; installed meanwhile: ${installed.map((i) => `${i.need.split(',')[0]}${i.need.includes(',') ? ',…' : ''} ${s(i.seconds)}`).join(', ')}`
        : ''),
  );
  const failedTests = ordered.flatMap((r) => (r.failures ?? []).map((f) => `${r.name}: ${f}`));
  if (failedTests.length > 0) {
    console.log('failed tests:');
    for (const f of failedTests) console.log(`  ✗ ${f}`);
  }
  const unfinished = [...installs.values()].filter((i) => i.running).map((i) => i.need);
  if (unfinished.length > 0) console.log(`(still installing in the background, for the next run: ${unfinished.join(', ')})`);
  const total = ordered.reduce(
    (a, r) => ({ passed: a.passed + (r.passed ?? 0), failed: a.failed + (r.failed ?? 0), skipped: a.skipped + (r.skipped ?? 0) }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  // Test phases that ran but passed nothing count as a failure; a run of only lint/format/types/build does not.
  const ranTests = ordered.some((r) => r.ran);
  process.exit(total.failed > 0 || (ranTests && total.passed === 0) ? 1 : 0);
}

// better-sqlite3's compiled build into npm's prebuild cache: the next `npm install` on this machine (a fresh clone,
// the store-package test's consumer) unpacks it instead of compiling SQLite again (scripts/host/prebuildCache.mjs).
try {
  const seeded = seedPrebuildCache(root);
  if (seeded.startsWith('cached')) console.log(seeded);
} catch (err) {
  console.log(`(better-sqlite3 build not cached: ${err instanceof Error ? err.message : String(err)})`);
}
startInstalls();
schedule();
