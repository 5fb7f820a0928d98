/**
 * The session store as an npm package, used the way a JS developer would: `scripts/packStore.mjs` builds the tarball,
 * a fresh project installs it from the npm registry's point of view (`npm install <tarball> @openai/agents zod`), and
 * scripts in that project run a real `@openai/agents` run on an offline model through `AdvancedSQLiteSession`, as an
 * ES module and as CommonJS, on better-sqlite3 (Node 20) and on node:sqlite (Node 22), then read the file back with
 * `openSessionDatabase`. A TypeScript file in the project type-checks against the shipped declarations.
 *
 * Outside test/unit/store on purpose: the store suites also run on other Node versions, and this suite installs
 * once for all of them. Set ASI_KEEP_TEMP=1 to keep the project, ASI_STORE_PACKAGE_LOG=1 to print each run's output.
 */
import { strict as assert } from 'node:assert';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(__dirname, '..', '..', '..');
const PACKAGE = '@agent-session-inspector/store';
/** The Node 22 the store suites use (node:sqlite without a flag needs 22.13 or later). */
const NODE22_VERSION = '22.22.1';
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const AGENTS_VERSION = rootManifest.dependencies['@openai/agents']!;
const ZOD_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'zod', 'package.json'), 'utf8')) as { version: string }).version;
const log = process.env.ASI_STORE_PACKAGE_LOG === '1' ? (line: string) => console.log(line) : () => undefined;

/** The environment for child processes: no npm_* settings of the npm that started mocha, no forced driver. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'AGENT_SESSION_SQLITE_DRIVER') env[k] = v;
  return { ...env, NODE_NO_WARNINGS: '1', ...extra };
}

function exec(cmd: string, args: string[], cwd: string, env = childEnv(), timeoutMs = 120_000): SpawnSyncReturns<string> {
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  log(`$ ${[cmd, ...args].join(' ')}  (${((Date.now() - started) / 1000).toFixed(1)} s, exit ${r.status ?? r.signal})`);
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}${r.error ? `, ${r.error.message}` : ''}):\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r;
}

/** Node 22: from the test tools' cache (scripts/host/hostTools.mjs) when present, otherwise installed the same way. */
async function node22(): Promise<string> {
  const tools = join(ROOT, 'scripts', 'host', 'hostTools.mjs');
  if (existsSync(tools)) {
    const { ensureNode } = (await import(pathToFileURL(tools).href)) as {
      ensureNode(v: string, log?: (l: string) => void): { bin: string };
    };
    return ensureNode(NODE22_VERSION, log).bin;
  }
  const cache = process.env.ASI_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agent-session-inspector');
  const prefix = join(cache, 'node', NODE22_VERSION);
  const bin = join(prefix, 'node_modules', '.bin', 'node');
  if (spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim() !== `v${NODE22_VERSION}`) {
    mkdirSync(prefix, { recursive: true });
    writeFileSync(join(prefix, 'package.json'), '{"name":"asi-node","private":true}\n');
    exec(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node@${NODE22_VERSION}`],
      prefix,
      childEnv(),
      300_000,
    );
  }
  return bin;
}

/**
 * The consumer's scenario, shared by the ESM and CJS entry scripts: an offline model that echoes the last user
 * message with fixed usage (10 input tokens per input item, 5 output), two turns on main, a branch from turn 2 with
 * one more turn, usage stored after every run, then the file read back with openSessionDatabase.
 */
const SCENARIO = String.raw`
async function scenario(sdk, store, dbPath, loadedFrom) {
  sdk.setTracingDisabled(true);
  const textOf = (item) =>
    typeof item.content === 'string' ? item.content : Array.isArray(item.content) ? item.content.map((p) => p.text ?? '').join('') : null;
  let responses = 0;
  class EchoModel {
    async getResponse(request) {
      const input = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
      const lastUser = [...input].reverse().find((i) => i.role === 'user');
      const inputTokens = 10 * input.length;
      return {
        responseId: 'resp_' + ++responses,
        usage: new sdk.Usage({ requests: 1, inputTokens, outputTokens: 5, totalTokens: inputTokens + 5 }),
        output: [{ id: 'msg_' + responses, type: 'message', role: 'assistant', status: 'completed',
          content: [{ type: 'output_text', text: 'echo: ' + textOf(lastUser) }] }],
      };
    }
    async *getStreamedResponse() {
      throw new Error('not streamed');
    }
  }
  const agent = new sdk.Agent({ name: 'Echo', instructions: 'Repeat the question.', model: new EchoModel() });
  const session = new store.AdvancedSQLiteSession({ sessionId: 'trip', dbPath, createTables: true });
  const finalOutputs = [];
  for (const question of ['hello', 'what about Tokyo?']) {
    const result = await sdk.run(agent, question, { session });
    await session.storeRunUsage(result);
    finalOutputs.push(result.finalOutput);
  }
  const branch = await session.createBranchFromTurn(2, 'retry');
  const retry = await sdk.run(agent, 'what about Osaka?', { session });
  await session.storeRunUsage(retry);
  finalOutputs.push(retry.finalOutput);
  let refused;
  try {
    await session.createBranchFromTurn(99);
  } catch (err) {
    refused = { name: err.name, isBranchError: err instanceof store.BranchError, isSessionError: err instanceof store.SessionError, message: err.message };
  }
  const fromSession = {
    branch,
    current: session.getCurrentBranchId(),
    branches: (await session.listBranches()).map(({ branchId, messageCount, userTurns, isCurrent }) => ({ branchId, messageCount, userTurns, isCurrent })),
    mainItems: (await session.getItems(undefined, 'main')).map(textOf),
    usage: await session.getSessionUsage(),
    refused,
  };
  session.close();

  const db = store.openSessionDatabase(dbPath);
  const fromFile = {
    driver: db.driver,
    readonly: db.readonly,
    sessions: db.listSessions().map(({ sessionId, messageCount, branchCount, structured, usage }) => ({ sessionId, messageCount, branchCount, structured, usage })),
    tree: db.getBranchTree('trip').map(({ branchId, parentBranchId, forkTurn, sharedItemCount }) => ({ branchId, parentBranchId, forkTurn, sharedItemCount })),
    retryItems: db.getItemsPage('trip', 'retry', { limit: 50 }).items.map((e) => ({ type: e.type, turn: e.branchTurnNumber, text: e.corrupt ? null : textOf(e.item) })),
    usageRows: db.getUsageRows('trip', null).map(({ branchId, turn, requests, inputTokens, outputTokens, totalTokens }) => ({ branchId, turn, requests, inputTokens, outputTokens, totalTokens })),
  };
  db.close();
  let betterSqlite3;
  try {
    betterSqlite3 = 'loads as ' + store.resolveDriver('better-sqlite3');
  } catch (err) {
    betterSqlite3 = err.name + ': ' + err.message;
  }
  return { node: process.version, loadedFrom, resolved: store.resolveDriver(), betterSqlite3, finalOutputs, fromSession, fromFile };
}
`;

const ESM_SCRIPT = `import * as sdk from '@openai/agents';
import * as store from '${PACKAGE}';
${SCENARIO}
const out = await scenario(sdk, store, process.argv[2], import.meta.resolve('${PACKAGE}'));
console.log(JSON.stringify(out));
`;

const CJS_SCRIPT = `'use strict';
const sdk = require('@openai/agents');
const store = require('${PACKAGE}');
${SCENARIO}
scenario(sdk, store, process.argv[2], require.resolve('${PACKAGE}')).then(
  (out) => console.log(JSON.stringify(out)),
  (err) => { console.error(err); process.exit(1); },
);
`;

/** Uses the package's types from both module systems; each @ts-expect-error proves the types are real, not `any`. */
const TYPES_CHECK = `import { AdvancedSQLiteSession, PostgresSession, RedisSession, RemoteStoreError, SessionDatabaseError, openSessionDatabase, resolveDriver } from '${PACKAGE}';
import type { RemoteStoreProblem } from '${PACKAGE}';
import type { BranchInfo, DriverName, SessionDatabaseProblem, SessionSummary, TurnUsageRow } from '${PACKAGE}';
import type { Session } from '@openai/agents';

export async function check(): Promise<void> {
  const session: Session = new AdvancedSQLiteSession({ sessionId: 's', dbPath: 'typed.db', createTables: true, synchronous: 'NORMAL' });
  const advanced = new AdvancedSQLiteSession({ sessionId: 's' });
  const branches: BranchInfo[] = await advanced.listBranches();
  const id: string = await advanced.createBranchFromTurn(1, 'b');
  const rows = await advanced.getTurnUsage(null, 'main');
  const driver: DriverName = resolveDriver();
  const db = openSessionDatabase('typed.db', { readonly: true });
  const sessions: SessionSummary[] = db.listSessions();
  const problem: SessionDatabaseProblem = new SessionDatabaseError('locked', 'busy').problem;
  const onPostgres: Session = new PostgresSession({ sessionId: 's', connection: { url: 'postgres://app@localhost:5432/agents' } });
  const onRedis: Session = new RedisSession({ sessionId: 's', connection: { url: 'redis://localhost:6379/0' }, ttl: 60 });
  const remoteProblem: RemoteStoreProblem = new RemoteStoreError('auth', 'no').problem;
  void [session, branches, id, rows as TurnUsageRow[], driver, sessions, problem, onPostgres, onRedis, remoteProblem];
  // @ts-expect-error ttl is a number of seconds
  new RedisSession({ sessionId: 's', connection: { url: 'redis://localhost' }, ttl: 'soon' });
  // @ts-expect-error sessionId must be a string
  new AdvancedSQLiteSession({ sessionId: 1 });
  // @ts-expect-error unknown driver
  openSessionDatabase('typed.db', { driver: 'sqlite3' });
}
`;

interface ScenarioOutput {
  node: string;
  loadedFrom: string;
  resolved: string;
  betterSqlite3: string;
  finalOutputs: string[];
  fromSession: {
    branch: string;
    current: string;
    branches: { branchId: string; messageCount: number; userTurns: number; isCurrent: boolean }[];
    mainItems: (string | null)[];
    usage: { requests: number; inputTokens: number; outputTokens: number; totalTokens: number; totalTurns: number };
    refused: { name: string; isBranchError: boolean; isSessionError: boolean; message: string };
  };
  fromFile: {
    driver: string;
    readonly: boolean;
    sessions: { sessionId: string; messageCount: number; branchCount: number; structured: boolean; usage: unknown }[];
    tree: { branchId: string; parentBranchId: string | null; forkTurn: number | null; sharedItemCount: number }[];
    retryItems: { type: string | null; turn: number | null; text: string | null }[];
    usageRows: { branchId: string; turn: number; requests: number; inputTokens: number; outputTokens: number; totalTokens: number }[];
  };
}

describe('the store as an npm package (pack, install, run in a fresh project)', function () {
  this.timeout(300_000);
  let work: string;
  let project: string;
  let tarball: string;

  before(async function () {
    // Packing, installing (better-sqlite3 may compile from source) and fetching Node 22 once for the whole suite.
    this.timeout(900_000);
    work = mkdtempSync(join(tmpdir(), 'asi-store-package-'));
    const packOut = exec(
      process.execPath,
      [join(ROOT, 'scripts', 'packStore.mjs'), '--out-dir', join(work, 'pack')],
      ROOT,
      childEnv(),
      300_000,
    );
    tarball = packOut.stdout.trim().split('\n').pop()!;
    assert.ok(tarball.endsWith('.tgz') && existsSync(tarball), `packStore.mjs printed the tarball's path last: ${tarball}`);

    project = join(work, 'consumer');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{ "name": "store-consumer", "version": "1.0.0", "private": true }\n');
    exec(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--prefix',
        project,
        tarball,
        `@openai/agents@${AGENTS_VERSION}`,
        `zod@${ZOD_VERSION}`,
      ],
      project,
      childEnv(),
      600_000,
    );
    writeFileSync(join(project, 'run.mjs'), ESM_SCRIPT);
    writeFileSync(join(project, 'run.cjs'), CJS_SCRIPT);
  });

  after(function () {
    if (work && process.env.ASI_KEEP_TEMP !== '1') rmSync(work, { recursive: true, force: true });
    else if (work) console.log(`kept ${work}`);
  });

  it('installs with its bundles, declarations, README and LICENSE, better-sqlite3 optional, the server drivers required and @openai/agents an optional peer', function () {
    const dir = join(project, 'node_modules', ...PACKAGE.split('/'));
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    assert.equal(manifest.version, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    assert.equal(manifest.license, 'MIT');
    assert.deepEqual(
      manifest.dependencies,
      {
        pg: rootManifest.dependencies.pg,
        ioredis: rootManifest.dependencies.ioredis,
        '@types/pg': rootManifest.devDependencies['@types/pg'],
      },
      'the PostgreSQL and Redis drivers (and the pg types its declarations name), nothing else',
    );
    for (const dep of ['pg', 'ioredis']) assert.ok(existsSync(join(project, 'node_modules', dep, 'package.json')), `${dep} is installed`);
    assert.deepEqual(Object.keys(manifest.optionalDependencies), ['better-sqlite3']);
    assert.equal(manifest.peerDependenciesMeta['@openai/agents'].optional, true);
    assert.deepEqual(manifest.exports['.'], {
      import: { types: './dist/types/index.d.mts', default: './dist/index.mjs' },
      require: { types: './dist/types/index.d.ts', default: './dist/index.cjs' },
    });
    for (const f of [
      'README.md',
      'LICENSE',
      'dist/index.mjs',
      'dist/index.cjs',
      'dist/types/index.d.ts',
      'dist/types/index.d.mts',
      // The bin: a loader, the CLI, and the vendor bundles it loads on first use.
      'dist/cli.cjs',
      'dist/cliMain.cjs',
      'dist/vendor/zod.js',
      'dist/vendor/o200k.js',
      'dist/vendor/mcp.js',
    ]) {
      assert.ok(existsSync(join(dir, f)), `${f} is in the package`);
    }
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /AdvancedSQLiteSession/);
    // better-sqlite3 was installed next to it (built or prebuilt for the Node that ran npm: Node 20 here).
    assert.ok(existsSync(join(project, 'node_modules', 'better-sqlite3', 'package.json')), 'better-sqlite3 is installed');
    // Declarations name nothing outside the package but @openai/agents, the server drivers and Node built-ins.
    const types = readdirSync(join(dir, 'dist', 'types'), { recursive: true, encoding: 'utf8' }).filter((f) => /\.d\.m?ts$/.test(f));
    for (const f of types) {
      const text = readFileSync(join(dir, 'dist', 'types', f), 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        assert.ok(
          /^\.\.?\//.test(spec) ? /\.m?js$/.test(spec) : ['@openai/agents', 'pg', 'ioredis'].includes(spec) || spec.startsWith('node:'),
          `${f} imports '${spec}'`,
        );
      }
    }
  });

  function runScenario(node: string, script: 'run.mjs' | 'run.cjs', driver: string | undefined): ScenarioOutput {
    const dbPath = join(work, `${script}-${driver ?? 'auto'}-${Date.now()}.db`);
    const r = exec(node, [script, dbPath], project, childEnv(driver ? { AGENT_SESSION_SQLITE_DRIVER: driver } : {}));
    log(r.stdout.trim());
    if (r.stderr.trim()) log(`stderr: ${r.stderr.trim()}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as ScenarioOutput;
  }

  /** What every run must have written and read back, whatever the driver and module system. */
  function assertScenario(out: ScenarioOutput, driver: string, entry: RegExp): void {
    assert.match(out.loadedFrom, entry, 'the entry the module system picked');
    assert.equal(out.fromFile.driver, driver);
    assert.deepEqual(out.finalOutputs, ['echo: hello', 'echo: what about Tokyo?', 'echo: what about Osaka?']);

    const s = out.fromSession;
    assert.equal(s.branch, 'retry');
    assert.equal(s.current, 'retry', 'createBranchFromTurn switches to the new branch');
    assert.deepEqual(s.branches, [
      { branchId: 'main', messageCount: 4, userTurns: 2, isCurrent: false },
      { branchId: 'retry', messageCount: 4, userTurns: 2, isCurrent: true },
    ]);
    assert.deepEqual(s.mainItems, ['hello', 'echo: hello', 'what about Tokyo?', 'echo: what about Tokyo?']);
    // Inputs: 1 item (turn 1), 3 items (turn 2 on main), 3 items (turn 2 on retry); 10 tokens each, 5 out.
    assert.deepEqual(s.usage, { requests: 3, inputTokens: 70, outputTokens: 15, totalTokens: 85, totalTurns: 3 });
    assert.deepEqual(s.refused, {
      name: 'BranchError',
      isBranchError: true,
      isSessionError: true,
      message: "Turn 99 does not contain a user message in branch 'retry'",
    });

    const f = out.fromFile;
    assert.equal(f.readonly, true);
    assert.deepEqual(f.sessions, [
      {
        sessionId: 'trip',
        messageCount: 6,
        branchCount: 2,
        structured: true,
        usage: { requests: 3, inputTokens: 70, outputTokens: 15, totalTokens: 85, totalTurns: 3 },
      },
    ]);
    assert.deepEqual(f.tree, [
      { branchId: 'main', parentBranchId: null, forkTurn: null, sharedItemCount: 0 },
      { branchId: 'retry', parentBranchId: 'main', forkTurn: 2, sharedItemCount: 2 },
    ]);
    assert.deepEqual(f.retryItems, [
      { type: 'user', turn: 1, text: 'hello' },
      { type: 'assistant', turn: 1, text: 'echo: hello' },
      { type: 'user', turn: 2, text: 'what about Osaka?' },
      { type: 'assistant', turn: 2, text: 'echo: what about Osaka?' },
    ]);
    assert.deepEqual(f.usageRows, [
      { branchId: 'main', turn: 1, requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      { branchId: 'main', turn: 2, requests: 1, inputTokens: 30, outputTokens: 5, totalTokens: 35 },
      { branchId: 'retry', turn: 2, requests: 1, inputTokens: 30, outputTokens: 5, totalTokens: 35 },
    ]);
  }

  describe('on Node 20 with better-sqlite3', function () {
    before(function () {
      if (!process.versions.node.startsWith('20.')) this.skip();
    });
    it('runs an agent through AdvancedSQLiteSession as an ES module (import)', function () {
      const out = runScenario(process.execPath, 'run.mjs', 'better-sqlite3');
      assertScenario(out, 'better-sqlite3', /\/dist\/index\.mjs$/);
      assert.equal(out.betterSqlite3, 'loads as better-sqlite3', 'the ESM bundle loads the addon with its own require');
    });
    it('runs an agent through AdvancedSQLiteSession as CommonJS (require)', function () {
      assertScenario(runScenario(process.execPath, 'run.cjs', 'better-sqlite3'), 'better-sqlite3', /\/dist\/index\.cjs$/);
    });
  });

  describe('on Node 22 with node:sqlite', function () {
    let node: string;
    before(async function () {
      this.timeout(300_000);
      node = await node22();
    });
    it('runs an agent through AdvancedSQLiteSession as an ES module (import)', function () {
      const out = runScenario(node, 'run.mjs', 'node:sqlite');
      assert.equal(out.node, `v${NODE22_VERSION}`);
      assertScenario(out, 'node:sqlite', /\/dist\/index\.mjs$/);
    });
    it('runs an agent through AdvancedSQLiteSession as CommonJS (require)', function () {
      assertScenario(runScenario(node, 'run.cjs', 'node:sqlite'), 'node:sqlite', /\/dist\/index\.cjs$/);
    });
    it('falls back to node:sqlite by itself when the installed better-sqlite3 addon was built for another Node', function () {
      if (!process.versions.node.startsWith('20.')) this.skip();
      const out = runScenario(node, 'run.mjs', undefined);
      assert.equal(out.resolved, 'node:sqlite');
      assertScenario(out, 'node:sqlite', /\/dist\/index\.mjs$/);
      // The addon was found and refused (built for Node 20's ABI), not missing: the ESM bundle's require resolved it.
      assert.match(out.betterSqlite3, /^SessionDatabaseError: .*better_sqlite3\.node/);
      assert.doesNotMatch(out.betterSqlite3, /Cannot find module/);
    });
  });

  it('installs the agent-sessions command, which reads a Python-written file', function () {
    const bin = join(project, 'node_modules', '.bin', 'agent-sessions');
    assert.ok(existsSync(bin), 'npm linked the bin');
    // The command keeps V8's code cache of itself (src/cli/cliLoader.ts): into a folder of this test's, not the user's.
    const xdg = join(work, 'xdg-cache');
    const env = childEnv({ XDG_CACHE_HOME: xdg });
    const fixture = join(ROOT, 'test', 'fixtures', 'conformance', 'ref-multisession.db');
    const ls = exec(bin, ['ls', fixture, '--json'], project, env);
    const sessions = (JSON.parse(ls.stdout) as { sessionId: string }[]).map((r) => r.sessionId).sort();
    assert.deepEqual(sessions, ['alice', 'bob']);
    const show = exec(bin, ['show', fixture, 'alice', '--branch', 'alt', '--no-pager'], project, env);
    assert.match(show.stdout, /Something sci-fi but short\?/);
    assert.equal(
      exec(bin, ['--version'], project, env).stdout.trim(),
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
    );
    // `context` counts tokens with o200k_base, whose tables are a vendor bundle of the package loaded on first use.
    const context = exec(bin, ['context', fixture, 'alice', '--turn', '1', '--json'], project, env);
    const answer = JSON.parse(context.stdout) as { requests: { items: { tokens: number }[] }[] };
    assert.ok(answer.requests[0]!.items[0]!.tokens > 0, context.stdout);
    // Each command's first run wrote its cache, named after the package's CLI file (the VSIX's `cliMain-…` are
    // another build's and stay).
    const caches = readdirSync(join(xdg, 'agent-session-inspector', 'code-cache')).sort();
    for (const command of ['ls', 'show', 'context'])
      assert.ok(
        caches.some((f) => new RegExp(`^cliMain\\.cjs-[0-9a-f]+-${command}\\.bin$`).test(f)),
        `a code cache for ${command}: ${caches.join(', ')}`,
      );
    // A second run reads the cache and answers the same.
    assert.equal(exec(bin, ['show', fixture, 'alice', '--branch', 'alt', '--no-pager'], project, env).stdout, show.stdout);
  });

  it('type-checks a TypeScript consumer against the declarations, from ESM (.mts) and CommonJS (.cts)', function () {
    writeFileSync(join(project, 'check.mts'), TYPES_CHECK);
    writeFileSync(join(project, 'check.cts'), TYPES_CHECK);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['check.mts', 'check.cts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = exec(process.execPath, [tsc, '-p', 'tsconfig.json', '--listFiles'], project);
    const files = r.stdout.split('\n').map((l) => l.trim());
    const typesDir = join(project, 'node_modules', ...PACKAGE.split('/'), 'dist', 'types');
    assert.ok(files.includes(join(typesDir, 'index.d.mts')), 'the ESM file used the import declarations');
    assert.ok(files.includes(join(typesDir, 'index.d.ts')), 'the CommonJS file used the require declarations');
    // packStore.mjs ships only declarations index.d.ts reaches, so each one is in the program unless an import
    // between them failed to resolve (which skipLibCheck would not report, leaving some types `any`).
    const shipped = readdirSync(typesDir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.d\.m?ts$/.test(f));
    assert.ok(shipped.length > 10, `declarations shipped: ${shipped.join(', ')}`);
    assert.deepEqual(
      shipped.filter((f) => !files.includes(join(typesDir, f))),
      [],
      'declarations tsc did not reach',
    );
  });
});
