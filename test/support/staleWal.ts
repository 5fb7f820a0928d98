/**
 * Helpers for the stale -wal tests (format spec §11): other processes that hold a database open and never call
 * again (our drivers on their Node, Python's sqlite3), and a pause past the file system's timestamp tick.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../src/store';

const ROOT = join(__dirname, '..', '..');

/**
 * Waits past the kernel's timestamp tick (4 ms with HZ=250, 10 ms with HZ=100), so that the next change to a file
 * gets a later time than the last one: a rename in the same tick as the last write leaves the two times equal, and
 * the check then rightly cannot tell the order.
 */
export function nextTimestampTick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 25));
}

/**
 * `this node`: this test process's Node with the driver the suite runs on (better-sqlite3 on Node 20, node:sqlite
 * when scripts/runStoreSuites.mjs forces it); `node:sqlite`: a Node 22 from the tools' cache; `python`: Python's
 * sqlite3; `our session`: an `AdvancedSQLiteSession` on this Node.
 */
export type HolderKind = 'this node' | 'node:sqlite' | 'python' | 'our session';

export interface Holder {
  /** Resolves once the holder has written and holds the file. */
  ready: Promise<void>;
  /** Kills the holder (SIGKILL: it never closes) and waits for it to be gone. */
  kill(): Promise<void>;
}

/**
 * A Node of 22 or later with node:sqlite, from the test tools' cache (scripts/host/hostTools.mjs), or undefined
 * when none is installed there (`npm run install:host` installs them).
 */
export async function cachedNode22(): Promise<string | undefined> {
  const tools = (await import(pathToFileURL(join(ROOT, 'scripts', 'host', 'hostTools.mjs')).href)) as {
    STORE_NODE_VERSIONS: string[];
    nodePaths: (version: string) => { bin: string };
  };
  return tools.STORE_NODE_VERSIONS.map((v) => tools.nodePaths(v).bin).find((bin) => existsSync(bin));
}

/** Whether python3 with its sqlite3 module can be run here. */
export function hasPython(): boolean {
  return spawnSync('python3', ['-c', 'import sqlite3'], { stdio: 'ignore' }).status === 0;
}

/** What Python's holder does: WAL, every page rewritten through the -wal, no checkpoint, then idle. */
const PYTHON_HOLDER = [
  'import sqlite3, sys, time',
  'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
  "c.execute('PRAGMA journal_mode = WAL').fetchall()",
  "c.execute('PRAGMA wal_autocheckpoint = 0').fetchall()",
  "c.execute('VACUUM')",
  "print('holding', flush=True)",
  'time.sleep(600)',
].join('\n');

/**
 * Starts a process of `kind` holding `dbPath` open with committed frames in its -wal (see walHolder.ts; `extra`:
 * its options, such as `checkpoint`).
 */
export function startHolder(kind: HolderKind, dbPath: string, node22?: string, extra: readonly string[] = []): Holder {
  const script = (name: string) => join(ROOT, 'test', 'support', name);
  let child: ChildProcess;
  if (kind === 'python') {
    child = spawn('python3', ['-c', PYTHON_HOLDER, dbPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  } else {
    const node = kind === 'node:sqlite' ? node22 : process.execPath;
    if (!node) throw new Error('node:sqlite holder needs a Node 22 binary');
    const env = kind === 'node:sqlite' ? { ...process.env, AGENT_SESSION_SQLITE_DRIVER: 'node:sqlite' } : process.env;
    const file = kind === 'our session' ? script('sessionHolder.ts') : script('walHolder.ts');
    child = spawn(node, ['--no-warnings', '--import', 'tsx', file, dbPath, ...extra], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  let stdout = '';
  let stderr = '';
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${kind} holder did not start in 20 s: ${stderr}`)), 20_000);
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('holding')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the ${kind} holder exited before holding: ${stderr}`));
    });
  });
  return {
    ready,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A session of `count` items (a user's question and an answer, in turn) written to `path` by our store. */
export async function writeSession(path: string, sessionId: string, count: number): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, createTables: true });
  const items = Array.from({ length: count }, (_, i) =>
    i % 2 === 0 ? { role: 'user' as const, content: `${sessionId} question ${i}` } : { role: 'assistant' as const, content: `answer ${i}` },
  );
  await s.addItems(items as Parameters<AdvancedSQLiteSession['addItems']>[0]);
  s.close();
}

/** The sessions a fresh inspector reads at `path`, as `id:items`, sorted. */
export function sessionsAt(path: string): string[] {
  const db = openSessionDatabase(path);
  try {
    return db
      .listSessions()
      .map((s) => `${s.sessionId}:${s.messageCount}`)
      .sort();
  } finally {
    db.close();
  }
}

/**
 * Another process holding an open read transaction on `path` (a SHARED lock in a rollback-journal file, a snapshot
 * that keeps a checkpoint from finishing in a WAL file) until killed. `first`: JavaScript it runs before, with `db`
 * its connection (`openDatabase`, read-only when `readonly`).
 */
export function holdReadTransaction(
  path: string,
  options: { readonly?: boolean; first?: string } = {},
): { ready: Promise<void>; kill: () => Promise<void> } {
  const code = `
    const { openDatabase } = require(${JSON.stringify(join(ROOT, 'src', 'store'))});
    const db = openDatabase(process.argv[1], { readonly: ${options.readonly === true} });
    ${options.first ?? ''}
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    process.stdout.write('holding\\n');
    setInterval(() => db.driver, 60000);
  `;
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', '-e', code, path], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('holding') && resolve());
    void exited.then(() => reject(new Error(`the reader exited before holding: ${stderr}`)));
  });
  return {
    ready,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
