/**
 * What `agent-sessions run` loads before its agent starts (issue 43, "the CLI's own start"): AG-UI's schemas and zod
 * (most of what `run` compiled and ran before spawning the agent) load only once the agent is spawned. The CLI is built
 * as dist/cli.js is (its heavy packages in ./vendor/, required on first use) and run with a preloaded hook that
 * records, in order, each vendor bundle it requires and each process it spawns.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { seedSession } from '../agents/agentTestKit';

const HOOK = `const Module = require('node:module');
const cp = require('node:child_process');
const events = [];
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request.startsWith('./vendor/')) events.push(request);
  return load.call(this, request, ...rest);
};
const spawn = cp.spawn;
cp.spawn = function (...args) {
  events.push('spawn');
  return spawn.apply(this, args);
};
process.on('exit', () => require('node:fs').writeFileSync(process.env.RUN_START_EVENTS, JSON.stringify(events)));
`;

describe("agent-sessions run: what loads before the agent's start", function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-run-start-');
  const cli = join(tmp.dir, 'cli.js');
  const db = join(tmp.dir, 'conversations.db');

  before(async function () {
    const root = pathToFileURL(join(ROOT, 'scripts')).href;
    const { cliBuildOptions } = (await import(`${root}/store-package/cliBuild.mjs`)) as {
      cliBuildOptions: (outfile: string, o: { vendorDir: string }) => esbuild.BuildOptions;
    };
    const { vendorBuildOptions } = (await import(`${root}/vendorBundles.mjs`)) as {
      vendorBuildOptions: (outdir: string, common: esbuild.BuildOptions) => (esbuild.BuildOptions & { outfile: string })[];
    };
    const { nodeBundleOptions } = (await import(`${root}/extensionBuild.mjs`)) as { nodeBundleOptions: () => esbuild.BuildOptions };
    // The groups `run` can reach: AG-UI's schemas and the zod they use.
    const groups = vendorBuildOptions(join(tmp.dir, 'vendor'), nodeBundleOptions()).filter((o) => /\/(agUi|zod)\.js$/.test(o.outfile));
    assert.equal(groups.length, 2);
    await Promise.all([
      esbuild.build(cliBuildOptions(cli, { vendorDir: './vendor/' })),
      ...groups.map((o) => esbuild.build({ ...o, logLevel: 'silent' })),
    ]);
    writeFileSync(join(tmp.dir, 'hook.cjs'), HOOK);
    await seedSession(db, [['Weather in Paris?', 'Mild.']]);
  });
  after(() => tmp.cleanup());

  /**
   * `run` of `cli` (the built CLI, or an instrumented copy) with `hook` preloaded, its agent printing one valid event
   * and writing no turn: the run fails as such. Returns what it printed; `events` is the hook's file.
   */
  function runWithHook(hook: string, cli: string, events: string): string {
    const agent = `"${process.execPath}" -e "console.log(JSON.stringify({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' }))"`;
    const r = spawnSync(process.execPath, ['-r', hook, cli, 'run', db, 's1', '--command', agent, '--message', 'Hi'], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), RUN_START_EVENTS: events, NO_COLOR: '1' },
      timeout: 60_000,
    });
    assert.match(r.stdout + r.stderr, /exited without writing a turn/);
    return r.stdout + r.stderr;
  }

  /** A hook (in the test's folder, as `name`) that writes `json`, an expression, to RUN_START_EVENTS at the first spawn. */
  function atFirstSpawn(name: string, json: string): string {
    const hook = join(tmp.dir, name);
    writeFileSync(
      hook,
      `const cp = require('node:child_process'); const spawn = cp.spawn; let seen = false;
cp.spawn = function (...args) {
  if (!seen) { seen = true; require('node:fs').writeFileSync(process.env.RUN_START_EVENTS, ${json}); }
  return spawn.apply(this, args);
};`,
    );
    return hook;
  }

  it("evaluates only the store's session modules before the agent's start, not the inspector, search, export, traces or reviews", () => {
    // esbuild's lazy module wrappers (`__esm`) run a module on first use: recording their names shows what ran by the
    // agent's spawn. A module that is not wrapped runs when the bundle loads, so the heavy ones must be wrapped too.
    const source = readFileSync(cli, 'utf8');
    const helper = 'var __esm = (fn, res) => function __init() {\n';
    assert.ok(source.includes(helper), "esbuild's __esm helper not found: the bundle's shape changed");
    const instrumented = join(tmp.dir, 'cli.evaluated.js');
    writeFileSync(
      instrumented,
      source.replace(helper, `${helper}  if (fn) (globalThis.__evaluated ??= []).push(__getOwnPropNames(fn)[0]);\n`),
    );
    const heavy = [
      'src/store/index.ts',
      'src/store/inspector/sessionDatabase.ts',
      'src/store/search/searchDatabase.ts',
      'src/store/export/sessionExport.ts',
      'src/store/export/importSession.ts',
      'src/store/traces/traceStore.ts',
      'src/store/reviews/reviewStore.ts',
      'src/store/remote/postgresSession.ts',
    ];
    for (const module of heavy) assert.ok(source.includes(`"${module}"() {`), `${module} runs when the bundle loads, not on first use`);

    const events = join(tmp.dir, 'evaluated.json');
    const hook = atFirstSpawn('evaluatedHook.cjs', 'JSON.stringify(globalThis.__evaluated ?? [])');
    runWithHook(hook, instrumented, events);
    const evaluated = JSON.parse(readFileSync(events, 'utf8')) as string[];
    // What the run needs before its spawn: the session class (and through it the driver), the branch opened.
    for (const needed of ['src/store/session/advancedSqliteSession.ts', 'src/agents/branchOpening.ts'])
      assert.ok(evaluated.includes(needed), `${needed} not seen (is the recording broken?): ${evaluated.join(', ')}`);
    assert.deepEqual(
      heavy.filter((m) => evaluated.includes(m)),
      [],
      `evaluated before the agent's start: ${evaluated.join(', ')}`,
    );
  });

  it("loads neither worker_threads nor better-sqlite3's search for its addon (`bindings`) before the agent's start", () => {
    // `run` spawns its agent on its own thread (launcher.ts loads worker_threads with a launcher thread), and the driver
    // names the addon where better-sqlite3's install puts it (betterSqlite3Driver.ts).
    const events = join(tmp.dir, 'loaded.json');
    const hook = atFirstSpawn(
      'loadedHook.cjs',
      `JSON.stringify({
        workerThreads: process.moduleLoadList.includes('NativeModule worker_threads'),
        bindings: Object.keys(require.cache).some((k) => /[\\\\/]node_modules[\\\\/]bindings[\\\\/]/.test(k)),
        addon: Object.keys(require.cache).some((k) => /better_sqlite3\\.node$/.test(k)),
      })`,
    );
    runWithHook(hook, cli, events);
    assert.deepEqual(JSON.parse(readFileSync(events, 'utf8')), { workerThreads: false, bindings: false, addon: true });
  });

  it('spawns the agent before it requires AG-UI or zod, and loads them beside it', () => {
    const events = join(tmp.dir, 'events.json');
    const output = runWithHook(join(tmp.dir, 'hook.cjs'), cli, events);
    assert.doesNotMatch(output, /not a valid|not an AG-UI event/);
    const order = JSON.parse(readFileSync(events, 'utf8')) as string[];
    const spawned = order.indexOf('spawn');
    assert.ok(spawned >= 0, `no spawn: ${order.join(', ')}`);
    assert.deepEqual(
      order.slice(0, spawned).filter((e) => /agUi|zod/.test(e)),
      [],
      `required before the agent's start: ${order.join(', ')}`,
    );
    assert.ok(order.slice(spawned).includes('./vendor/agUi.js'), `AG-UI's schemas never loaded: ${order.join(', ')}`);
  });
});
