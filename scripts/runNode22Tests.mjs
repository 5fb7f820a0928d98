// Runs the store's test suites a second time on Node 22 with the built-in node:sqlite driver (the fallback used
// when better-sqlite3's addon cannot load, e.g. inside an editor with another Node ABI).
// Node 22 comes from the npm registry (the `node` package ships the binary) into .cache/node22, once.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const prefix = join(root, '.cache', 'node22');
const node22 = join(prefix, 'node_modules', '.bin', 'node');
const NODE_PACKAGE = 'node@22';

function version(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

if (!existsSync(node22) || !version(node22)?.startsWith('v22.')) {
  console.log(`Installing ${NODE_PACKAGE} into ${prefix} (once) ...`);
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, NODE_PACKAGE], {
    stdio: 'inherit',
    cwd: root,
  });
  if (r.status !== 0 || !version(node22)?.startsWith('v22.')) {
    console.error(`node:sqlite suite: could not install ${NODE_PACKAGE} from the npm registry; the suite cannot run.`);
    process.exit(1);
  }
}

console.log(`Running the store suites on ${version(node22)} with the node:sqlite driver`);
const mocha = join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const specs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['test/unit/store/**/*.test.ts', 'test/unit/inspector/**/*.test.ts'];
// --no-config: run only the store suites named here, not every spec .mocharc.json lists.
const options = ['--no-config', '--extension', 'ts', '--node-option', 'import=tsx', '--timeout', '30000', '--reporter', 'test/support/countingReporter.js'];
const r = spawnSync(node22, [mocha, ...options, ...specs], {
  stdio: 'inherit',
  cwd: root,
  env: { ...process.env, AGENT_SESSION_SQLITE_DRIVER: 'node:sqlite', ASI_TEST_PHASE: 'store on Node 22 (node:sqlite)', NODE_NO_WARNINGS: '1' },
});
process.exit(r.status ?? 1);
