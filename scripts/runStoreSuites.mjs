// Runs the store's test suites (everything under test/unit/store/: the session store, inspector, export and search
// suites; or the spec files given) on an exact Node version with the built-in node:sqlite driver: the driver every
// VS Code desktop user runs, on the Node their VS Code ships. That Node
// comes from the npm registry on first use (scripts/host/hostTools.mjs), cached under node/<version> in the per-user
// tools' cache (hostTools' CACHE: $ASI_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/agent-session-inspector).
//   node scripts/runStoreSuites.mjs 22.15.1 [spec …]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { InstallError, ROOT, STORE_NODE_VERSIONS, ensureNode } from './host/hostTools.mjs';

const major = (v) => v.split('.')[0];

const [version, ...specs] = process.argv.slice(2);
if (!version) {
  console.error('usage: node scripts/runStoreSuites.mjs <node version> [spec …]');
  process.exit(64);
}
let node;
try {
  node = ensureNode(version).bin;
} catch (err) {
  console.error(`store suites on Node ${version}: ${err instanceof InstallError ? err.message : String(err)}`);
  process.exit(1);
}
console.log(`Running the store suites on Node ${version} with the node:sqlite driver`);
const mocha = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
// And the CLI's heap sizing: the V8 flags it sets behave differently by V8 version (src/cli/heapSizing.ts). Once per
// V8 line, on the newest Node of each major here: the three Node 22 versions carry the same V8 (12.4.254.21, Node's
// patches aside), and the suite spawns a process for each of its 14 checks (17–38 s a phase).
// STORE_NODE_VERSIONS is in ascending order: the newest of a major is the one the next version does not share it with.
const newestOfMajor = STORE_NODE_VERSIONS.filter((v, i) => major(v) !== major(STORE_NODE_VERSIONS[i + 1] ?? ''));
const heapSizing = newestOfMajor.includes(version) ? ['test/unit/cli/heapSizing.test.ts'] : [];
if (specs.length === 0 && heapSizing.length === 0) {
  console.log(
    `(the CLI's heap sizing suite runs on Node ${newestOfMajor.filter((v) => major(v) === major(version)).join(', ')}, the same V8)`,
  );
}
const files = specs.length > 0 ? specs : ['test/unit/store/**/*.test.ts', ...heapSizing];
// --no-config: run only the store suites named here, not every spec .mocharc.json lists.
const options = [
  '--no-config',
  '--extension',
  'ts',
  '--node-option',
  'import=tsx',
  '--timeout',
  '30000',
  '--reporter',
  'test/support/countingReporter.js',
];
const r = spawnSync(node, [mocha, ...options, ...files], {
  stdio: 'inherit',
  cwd: ROOT,
  env: { ...process.env, AGENT_SESSION_SQLITE_DRIVER: 'node:sqlite', ASI_TEST_PHASE: `store on Node ${version} (node:sqlite)` },
});
process.exit(r.status ?? 1);
