// `npm test`: every check the project has, in order, with one summary at the end.
//   lint → types → build + package (VSIX) → unit (Node 20, better-sqlite3) → store suites (Node 22, node:sqlite)
//   → integration inside code-server's extension host → UI tests in Chromium against the packaged extension.
// A failing phase does not stop the test phases after it (so one run reports everything), but the exit code is
// non-zero when anything failed. The last line is "total: N passed, N failed, N skipped".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const countsDir = mkdtempSync(join(tmpdir(), 'asi-counts-'));
const countsFile = join(countsDir, 'counts.jsonl');
const only = process.argv.slice(2);

const npx = (...args) => ['npx', ['--no-install', ...args]];
const phases = [
  { name: 'lint', cmd: npx('eslint', '.'), tests: false },
  { name: 'types', cmd: ['npm', ['run', '--silent', 'typecheck']], tests: false },
  { name: 'build', cmd: ['npm', ['run', '--silent', 'package']], tests: false, gate: true },
  { name: 'unit', cmd: npx('mocha'), env: { ASI_TEST_PHASE: 'unit (Node 20, better-sqlite3)' } },
  { name: 'node22', cmd: ['node', ['scripts/runNode22Tests.mjs']] },
  { name: 'integration', cmd: ['node', ['--import', 'tsx', 'test/host/runInHost.ts', '--timeout', '600']], needsHost: true },
  { name: 'ui', cmd: npx('mocha', '--config', 'test/e2e/.mocharc.json'), needsHost: true },
];

const results = [];
let gateFailed = false;
for (const phase of phases) {
  if (only.length > 0 && !only.includes(phase.name)) continue;
  if (gateFailed) {
    results.push({ name: phase.name, status: 'not run (build failed)', failed: 1 });
    continue;
  }
  console.log(`\n━━━ ${phase.name} ━━━`);
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
  const counts = lines.map((l) => JSON.parse(l)).reduce((a, c) => ({ passed: a.passed + c.passed, failed: a.failed + c.failed, skipped: a.skipped + c.skipped }), { passed: 0, failed: 0, skipped: 0 });
  const ok = r.status === 0;
  if (phase.tests === false) {
    results.push({ name: phase.name, status: ok ? `ok (${seconds} s)` : `FAILED (exit ${r.status ?? r.signal}, ${seconds} s)`, failed: ok ? 0 : 1, passed: 0, skipped: 0 });
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
  });
}
rmSync(countsDir, { recursive: true, force: true });

console.log('\n━━━ summary ━━━');
for (const r of results) console.log(`${r.name.padEnd(12)} ${r.status}`);
const total = results.reduce((a, r) => ({ passed: a.passed + (r.passed ?? 0), failed: a.failed + (r.failed ?? 0), skipped: a.skipped + (r.skipped ?? 0) }), { passed: 0, failed: 0, skipped: 0 });
console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
