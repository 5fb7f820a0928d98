/**
 * Another writer holding the lock: a write waits for it (the busy timeout) and succeeds, on every driver and host
 * Node. Node 22.15.1's DatabaseSync ignores its `timeout` option, so without the driver's own PRAGMA busy_timeout
 * the extension's write would fail at once with SQLITE_BUSY on VS Code 1.101–1.102; these suites run on that Node.
 */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { AdvancedSQLiteSession, SessionDatabaseError } from '../../../../src/store';
import { Workspace } from '../../../support/sessionHelpers';

const HOLD_MS = 300;
const holder = join(__dirname, '..', '..', '..', 'support', 'lockHolder.ts');

/** Starts a child that holds the write lock for `ms`; resolves once it holds it, with its exit as a promise. */
async function holdLock(dbPath: string, ms: number): Promise<{ child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', holder, dbPath, String(ms)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: join(__dirname, '..', '..', '..', '..'),
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    void exited.then((code) => reject(new Error(`lock holder exited (${code}) before locking: ${stderr}`)));
  });
  return { child, exited };
}

describe(`a write while another process holds the lock for ${HOLD_MS} ms (Node ${process.versions.node})`, () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-lockwait-')));
  afterEach(() => ws.cleanup());

  async function seeded(): Promise<string> {
    const path = ws.path('locked.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    await s.addItems([{ role: 'user', content: 'one' }] as never);
    s.close();
    return path;
  }

  it('addItems and createBranchFromTurn wait for the lock and succeed', async () => {
    const path = await seeded();
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path });
    try {
      const { exited } = await holdLock(path, HOLD_MS);
      const t0 = Date.now();
      await s.addItems([{ role: 'user', content: 'two' }] as never);
      const waited = Date.now() - t0;
      assert.ok(waited >= HOLD_MS / 2, `the write waited for the lock (${waited} ms)`);
      assert.equal(await exited, 0);
      const { exited: again } = await holdLock(path, HOLD_MS);
      assert.equal(await s.createBranchFromTurn(2, 'after-lock'), 'after-lock');
      assert.equal(await again, 0);
      assert.deepEqual(
        (await s.getItems()).map((i) => (i as { content: string }).content),
        ['one'],
      );
    } finally {
      s.close();
    }
  });

  it('with a busy timeout shorter than the hold, fails with a clear locked error and writes nothing', async () => {
    const path = await seeded();
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, busyTimeoutMs: 20 });
    try {
      const { exited } = await holdLock(path, HOLD_MS);
      await assert.rejects(s.addItems([{ role: 'user', content: 'never' }] as never), (err: unknown) => {
        assert.ok(err instanceof SessionDatabaseError, `a SessionDatabaseError, got ${String(err)}`);
        assert.equal(err.problem, 'locked');
        assert.match(err.message, /is locked by another connection beyond the busy timeout/);
        return true;
      });
      assert.equal(await exited, 0);
      assert.equal((await s.getItems()).length, 1);
    } finally {
      s.close();
    }
  });
});
