// `npm test`: every check the project has, in order, with one summary at the end.
//   lint → format (Prettier) → types → build + package (VSIX) → unit (Node 20, better-sqlite3) → remote (Node 20,
//   against real PostgreSQL and Redis servers the tests start on free 127.0.0.1 ports) → store suites on
//   node:sqlite on each extension-host Node (22.15.1, 22.17.0, 22.22.1, 24.15.0) → for each real host (code-server 4.103.2 = VS Code
//   1.103 on Node 22.17.0, 4.139.1 = VS Code 1.139 on Node 24.15.0): integration inside its extension host, then
//   UI tests in Chromium against the packaged extension.
// Whatever a phase needs beyond `npm install` (Node versions, code-server, Chromium, build tools, Debian's postgresql
// and redis-server) is installed on first use: into .cache/ (scripts/host/hostTools.mjs), or by apt-get for Debian
// packages (scripts/host/servers.mjs for the servers); a phase whose tools cannot be installed fails with the reason.
// A failing phase does not stop the test phases after it (so one run reports everything), but the exit code is
// non-zero when anything failed. The last line is "total: N passed, N failed, N skipped".
//   npm test                      everything
//   npm test -- unit store-22.15.1 ui-vscode-1.139     only the phases named
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOSTS, InstallError, STORE_NODE_VERSIONS, ensureHost, ensureNode } from './host/hostTools.mjs';
import { ensureServerPackages } from './host/servers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const countsDir = mkdtempSync(join(tmpdir(), 'asi-counts-'));
const countsFile = join(countsDir, 'counts.jsonl');
const only = process.argv.slice(2);

const npx = (...args) => ['npx', ['--no-install', ...args]];
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
    prepare: () => ensureServerPackages(),
  },
  ...STORE_NODE_VERSIONS.map((v) => ({
    name: `store-${v}`,
    cmd: ['node', ['scripts/runStoreSuites.mjs', v]],
    prepare: () => ensureNode(v),
  })),
  ...HOSTS.flatMap((host) => [
    {
      name: `integration-${host.id}`,
      cmd: ['node', ['--import', 'tsx', 'test/host/runInHost.ts', '--timeout', '600']],
      env: { ASI_HOST: host.id, ASI_TEST_PHASE: `integration (${host.id}, Node ${host.node}, node:sqlite)` },
      // The launcher starts PostgreSQL and Redis for the server-store tests.
      prepare: () => {
        ensureServerPackages();
        ensureHost(host);
      },
    },
    {
      name: `ui-${host.id}`,
      cmd: npx('mocha', '--config', 'test/e2e/.mocharc.json'),
      env: { ASI_HOST: host.id, ASI_TEST_PHASE: `ui (${host.id}, Chromium)` },
      prepare: () => {
        ensureServerPackages();
        ensureHost(host);
      },
    },
  ]),
];
const unknown = only.filter((n) => !phases.some((p) => p.name === n));
if (unknown.length > 0) {
  console.error(`Unknown phase(s): ${unknown.join(', ')}. Phases: ${phases.map((p) => p.name).join(', ')}`);
  process.exit(64);
}

const results = [];
let gateFailed = false;
for (const phase of phases) {
  if (only.length > 0 && !only.includes(phase.name)) continue;
  if (gateFailed) {
    results.push({ name: phase.name, status: 'not run (build failed)', failed: 1 });
    continue;
  }
  console.log(`\n━━━ ${phase.name} ━━━`);
  if (phase.prepare) {
    const t = Date.now();
    try {
      phase.prepare();
    } catch (err) {
      const why = err instanceof InstallError ? err.message : String(err?.stack ?? err);
      console.error(`${phase.name}: cannot run: ${why}`);
      results.push({
        name: phase.name,
        status: `FAILED (could not install what it needs: ${why.split('\n')[0]})`,
        failed: 1,
        passed: 0,
        skipped: 0,
      });
      continue;
    }
    const s = (Date.now() - t) / 1000;
    if (s > 2) console.log(`(${phase.name}: tools ready after ${s.toFixed(1)} s)`);
  }
  const before = existsSync(countsFile) ? readFileSync(countsFile, 'utf8').split('\n').filter(Boolean).length : 0;
  const started = Date.now();
  const [cmd, args] = phase.cmd;
  const r = spawnSync(cmd, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...phase.env, ASI_TEST_COUNTS: countsFile },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const lines = existsSync(countsFile) ? readFileSync(countsFile, 'utf8').split('\n').filter(Boolean).slice(before) : [];
  const counts = lines
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
  const ok = r.status === 0;
  if (phase.tests === false) {
    results.push({
      name: phase.name,
      status: ok ? `ok (${seconds} s)` : `FAILED (exit ${r.status ?? r.signal}, ${seconds} s)`,
      failed: ok ? 0 : 1,
      passed: 0,
      skipped: 0,
    });
    if (!ok && phase.gate) gateFailed = true;
    continue;
  }
  // A runner that died before reporting (timeout, crash) counts as one failure, never as zero tests.
  const failed = counts.failed + (!ok && counts.failed === 0 ? 1 : 0);
  results.push({
    name: phase.name,
    status: `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${ok ? '' : ` (exit ${r.status ?? r.signal})`} in ${seconds} s`,
    passed: counts.passed,
    failed,
    skipped: counts.skipped,
    failures: counts.failures,
  });
}
rmSync(countsDir, { recursive: true, force: true });

console.log('\n━━━ summary ━━━');
for (const r of results) console.log(`${r.name.padEnd(26)} ${r.status}`);
const failedTests = results.flatMap((r) => (r.failures ?? []).map((f) => `${r.name}: ${f}`));
if (failedTests.length > 0) {
  console.log('failed tests:');
  for (const f of failedTests) console.log(`  ✗ ${f}`);
}
const total = results.reduce(
  (a, r) => ({ passed: a.passed + (r.passed ?? 0), failed: a.failed + (r.failed ?? 0), skipped: a.skipped + (r.skipped ?? 0) }),
  { passed: 0, failed: 0, skipped: 0 },
);
console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
