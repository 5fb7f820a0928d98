/** Read-only databases and files that are not what they claim: each failure is a clear notification. */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, openDatabase } from '../../src/store';
import { api, child, childRows, freshScratchPerTest, waitFor, type Scratch } from './helpers';

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('read-only mode and bad input', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it('a database toggled read-only refuses writes, hides write actions and is never written', async () => {
    const a = await api();
    const path = s.copy('conformance/ref-multisession.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path, { readonly: true });
    const before = sha(path);
    const dbNode = await child(a, undefined, 'ref-multisession.db');
    const alice = await child(a, dbNode, 'alice');
    const mainBranch = await child(a, alice, 'main');
    const turns = await childRows(a, mainBranch);
    assert.doesNotMatch(turns[0]!.contextValue, /canBranch/, 'no Branch from Turn on a read-only database');
    assert.doesNotMatch((await childRows(a, alice)).find((r) => r.label === 'alt')!.contextValue, /canDelete/);
    await vscode.commands.executeCommand('agentSessions.branchFromTurn', turns[1]!.node, 'not-allowed');
    assert.match(a.failures[0]?.message ?? '', /read-only/);
    assert.equal(sha(path), before);
    // Toggling makes it writable again.
    assert.equal(await vscode.commands.executeCommand('agentSessions.toggleReadOnly', dbNode), false);
    assert.equal(await vscode.commands.executeCommand('agentSessions.branchFromTurn', turns[1]!.node, 'allowed'), 'allowed');
  });

  it('the openReadOnly setting opens databases read-only', async () => {
    const a = await api();
    const config = vscode.workspace.getConfiguration('agentSessions');
    await config.update('openReadOnly', true, vscode.ConfigurationTarget.Global);
    try {
      const path = s.copy('conformance/ref-basic.db');
      await vscode.commands.executeCommand('agentSessions.openDatabase', path);
      assert.equal(a.registry.get(path)?.readonly, true);
      assert.equal(a.registry.get(path)?.readonlyReason, 'setting');
    } finally {
      await config.update('openReadOnly', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  const badFiles: [string, (dir: string) => string, RegExp][] = [
    ['a missing file', (dir) => join(dir, 'missing.db'), /does not exist/],
    [
      'a text file',
      (dir) => (writeFileSync(join(dir, 'notes.db'), 'just some text, not a database\n'.repeat(200)), join(dir, 'notes.db')),
      /not a SQLite database/,
    ],
    [
      'a SQLite file without session tables',
      (dir) => {
        const db = openDatabase(join(dir, 'other.db'));
        db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
        db.close();
        return join(dir, 'other.db');
      },
      /not an? (agent )?session database/i,
    ],
  ];
  for (const [what, make, message] of badFiles) {
    it(`opening ${what} shows why, and adds nothing`, async () => {
      const a = await api();
      const path = make(s.dir);
      assert.equal(await vscode.commands.executeCommand('agentSessions.openDatabase', path), undefined);
      assert.match(a.failures[0]?.message ?? '', message);
      assert.equal(a.registry.get(path), undefined);
    });
  }

  it('a truncated database reports corruption, on open or when read', async () => {
    const a = await api();
    const path = join(s.dir, 'big.db');
    const session = new AdvancedSQLiteSession({ sessionId: 'big', dbPath: path, createTables: true });
    for (let t = 0; t < 200; t++) await session.addItems([{ role: 'user', content: `question ${t} ${'x'.repeat(300)}` }]);
    session.close();
    truncateSync(path, Math.floor(readFileSync(path).length / 2));
    const opened = await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    if (opened !== undefined) {
      // The header survived: the damage shows when the tree reads the rows.
      const dbNode = await child(a, undefined, 'big.db');
      try {
        const sessions = await childRows(a, dbNode);
        for (const sess of sessions) for (const b of await childRows(a, sess.node)) await childRows(a, b.node);
      } catch {
        /* reported below */
      }
    }
    const problem = a.failures.map((f) => f.message).join('\n') + (a.registry.get(path)?.problem ?? '');
    assert.match(problem, /corrupt|malformed|not a SQLite database/i);
  });

  it('a database deleted while open shows the problem on its item; nothing crashes', async () => {
    const a = await api();
    const path = s.copy('conformance/ref-basic.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    await waitFor(() => a.registry.get(path)?.problem, 3000, 'the deleted file to be noticed');
    const rows = await childRows(a);
    assert.match(rows[0]!.description, /deleted or moved/);
    assert.deepEqual(await childRows(a, rows[0]!.node), []);
  });

  it('a file replaced while open, its old -wal left at the path: refused with the reason, then moved aside on request', async () => {
    const a = await api();
    const path = join(s.dir, 'replaced.db');
    // The old file: a writer that is not ours (a Python agent, say: it never steps aside, format spec §11) keeps
    // committed items in its -wal while the extension has the file open. Our own sessions would checkpoint their
    // -wal into the old file within a second of the replacement, which is the next test.
    const writer = openDatabase(path);
    const session = new AdvancedSQLiteSession({ sessionId: 'old-session', dbPath: path, createTables: true });
    await session.addItems([{ role: 'user', content: 'old content' }] as never);
    session.close(); // not the last connection: its frames stay in the -wal, held by the writer
    writer.prepare('PRAGMA wal_autocheckpoint = 0').get();
    writer.exec(`INSERT INTO agent_messages (session_id, message_data) VALUES ('old-session', '{"role":"user","content":"held"}')`);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await waitFor(() => a.registry.get(path)?.db, 3000, 'the file to open');
    // The new file, fully checkpointed (no -wal of its own), renamed over the path.
    const other = join(s.dir, 'other.db');
    const w = new AdvancedSQLiteSession({ sessionId: 'new-session', dbPath: other, createTables: true });
    for (let i = 0; i < 6; i++)
      await w.addItems([
        { role: 'user', content: `new ${i}` },
        { role: 'assistant', content: `a ${i}` },
      ] as never);
    w.close();
    renameSync(other, path);
    await a.registry.checkNow(path);
    const problem = (await waitFor(() => a.registry.get(path)?.problem, 3000, 'the replacement to be noticed')) ?? '';
    assert.match(problem, /replaced\.db-wal belongs to the file that replaced\.db replaced/);
    writer.close();
    // The extension keeps refusing the path (a reopen would show the old session) until the user agrees.
    await a.registry.checkNow(path);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(a.registry.get(path)?.db, undefined);
    assert.match(a.registry.get(path)?.problem ?? '', /Move replaced\.db-wal aside/);
    assert.ok(existsSync(`${path}-wal`), 'nothing was moved or deleted without the user');
    const moved = await a.registry.moveStaleWalAside(path);
    assert.ok(moved[0]?.startsWith(`${path}-wal.replaced-`), moved.join());
    assert.ok(existsSync(moved[0] as string), 'the old -wal is kept, renamed');
    const db = (await waitFor(() => a.registry.get(path)?.db, 3000, 'the new file to open'))!;
    const sessions = await db.listSessions();
    assert.deepEqual(
      sessions.map((x) => [x.sessionId, x.messageCount]),
      [['new-session', 12]],
    );
  });

  it('a file replaced while one of our sessions holds it: the session empties its -wal into the old file, and the new file opens', async () => {
    const a = await api();
    const path = join(s.dir, 'held.db');
    const holder = new AdvancedSQLiteSession({ sessionId: 'old-session', dbPath: path, createTables: true });
    await holder.addItems([{ role: 'user', content: 'old content' }] as never);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await waitFor(() => a.registry.get(path)?.db, 3000, 'the file to open');
    const other = join(s.dir, 'other-held.db');
    const w = new AdvancedSQLiteSession({ sessionId: 'new-session', dbPath: other, createTables: true });
    await w.addItems([{ role: 'user', content: 'new' }] as never);
    w.close();
    // Past the file system's timestamp tick, so the rename's time is later than the holder's last write.
    await new Promise((r) => setTimeout(r, 25));
    renameSync(other, path);
    // The holder never calls again: its watch (one stat a second) steps it aside.
    await waitFor(() => (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size === 0) || undefined, 5000, 'the holder to step aside');
    await assert.rejects(() => holder.getItems(), /replaced by another file/);
    holder.close();
    // The registry's next look closes its connection to the old file, the one after reconnects: to the new file,
    // with no Move Aside.
    await a.registry.checkNow(path);
    await a.registry.checkNow(path);
    const db = (await waitFor(() => a.registry.get(path)?.db, 3000, 'the new file to open'))!;
    assert.deepEqual(
      (await db.listSessions()).map((x) => x.sessionId),
      ['new-session'],
    );
  });
});
