/**
 * The history guard store on real SQLite files (either driver: the store phases run this on node:sqlite too): items
 * kept once by their stored text's hash, the looks that find rows gone (pop, a re-pointed row, another writer's
 * compaction) and record the branch's previous list as a layer, our own compaction recording what it replaced with
 * no guard on (and not twice with it on), a file replaced at its path keeping its layers under the old identity, the
 * files it refuses (a session file, a read-only place), restoring a layer as a new branch, and disk use.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { HistoryGuardError } from '../../../../src/store/guard/guardErrors';
import { HistoryGuardStore, itemHash } from '../../../../src/store/guard/guardStore';
import { observeSessionFile } from '../../../../src/store/guard/guardObserver';
import { restoreLayerAsBranch } from '../../../../src/store/guard/layerRestore';
import { GUARD_STORE_APPLICATION_ID } from '../../../../src/store/guard/guardSchema';
import { Workspace, branchTexts, mk, query, withDb } from '../../../support/sessionHelpers';
import { runSupportScript } from '../../../support/childProcess';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const texts = branchTexts;

describe('history guard store', () => {
  let ws: Workspace;
  let guard: HistoryGuardStore;
  let reader: SessionDatabase | undefined;
  beforeEach(() => {
    ws = new Workspace('asi-guard-');
    guard = HistoryGuardStore.open(join(ws.dir, 'guard.db'));
  });
  afterEach(() => {
    reader?.close();
    reader = undefined;
    guard.close();
    ws.cleanup();
  });

  async function twoTurns(options: { guardStorePath?: string } = {}): Promise<AdvancedSQLiteSession> {
    const s = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), createTables: true, ...options }));
    await s.addItems([mk.user('q1'), mk.assistant('a1')]);
    await s.addItems([mk.user('q2'), mk.assistant('a2')]);
    return s;
  }

  const look = () => {
    reader ??= openSessionDatabase(ws.path(), { readonly: true });
    return observeSessionFile(guard, reader);
  };

  it('has an application id of its own and refuses a session file untouched', async () => {
    assert.equal(
      Number(guard.db.prepare('PRAGMA application_id').get<{ application_id: number }>()?.application_id),
      GUARD_STORE_APPLICATION_ID,
    );
    (await twoTurns()).close();
    const before = sha(ws.path());
    assert.throws(
      () => HistoryGuardStore.open(ws.path()),
      (e: unknown) => e instanceof HistoryGuardError && e.problem === 'not-guard-store',
    );
    assert.equal(sha(ws.path()), before);
  });

  it('keeps an item once, however many branches, sessions and looks hold it', async () => {
    const s = await twoTurns();
    await s.createBranchFromTurn(2, 'alt'); // copies turn 1's rows: the same messages
    await s.addItems([mk.user('q1')]); // the same text as turn 1's user message, a new row
    const other = ws.open({ sessionId: 's2', createTables: false });
    await other.addItems([mk.user('q1'), mk.assistant('a1')]);
    assert.equal(look().kind, 'first');
    assert.equal(look().kind, 'unchanged');
    const distinct = new Set(
      query<{ message_data: string }>(ws.path(), 'SELECT message_data FROM agent_messages').map((r) => r.message_data),
    );
    assert.equal(distinct.size, 4); // q1, a1, q2, a2
    assert.equal(guard.diskUse().items, 4);
    assert.equal(Number(guard.db.prepare('SELECT COUNT(*) AS n FROM guard_seen').get<{ n: number }>()?.n), 4 + 3 + 2);
    // The address is the hash of the stored text, byte for byte.
    const hashes = guard.db
      .prepare('SELECT hash FROM guard_items')
      .all<{ hash: Uint8Array }>()
      .map((r) => Buffer.from(r.hash).toString('hex'));
    assert.deepEqual(new Set(hashes), new Set([...distinct].map((t) => itemHash(t).toString('hex'))));
  });

  it('records what a pop removed as a layer of that branch, the previous list whole', async () => {
    const s = await twoTurns();
    const before = texts(ws.path(), 's1', 'main');
    look();
    await s.popItem();
    const l = look();
    assert.equal(l.kind, 'rescanned');
    assert.equal(l.layers.length, 1);
    const [layer] = guard.layersOf(ws.path(), 's1', 'main');
    assert.equal(layer?.cause, 'another-writer');
    assert.equal(layer?.itemCount, 4);
    assert.equal(layer?.removedCount, 1);
    assert.equal(layer?.oldIdentity, false);
    const items = guard.layerItems(layer!.layerId);
    assert.deepEqual(
      items.map((i) => i.messageData),
      before,
    );
    assert.deepEqual(
      items.map((i) => i.removed),
      [false, false, false, true],
    );
    // Growing again records nothing more.
    await s.addItems([mk.assistant('a2 again')]);
    assert.equal(look().kind, 'grown');
    assert.equal(guard.layersOf(ws.path(), 's1').length, 1);
  });

  it('sees a row re-pointed to a new message (a history rewrite) as its item replaced', async () => {
    const s = ws.open();
    await s.addItems([mk.user('q1'), mk.call('get_weather', { callId: 'c1' }), mk.output('c1'), mk.assistant('a1')]);
    look();
    await s.applyHistoryMutations({
      mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: mk.call('get_forecast', { callId: 'c1' }) }],
    } as never);
    const l = look();
    assert.equal(l.layers.length, 1);
    const items = guard.layerItems(l.layers[0]!.layerId);
    assert.deepEqual(
      items.map((i) => i.removed),
      [false, true, false, false],
    );
    assert.match(items[1]!.messageData, /get_weather/);
  });

  it('records our own compaction without the guard on, and only once with it on', async () => {
    const guardPath = join(ws.dir, 'guard.db');
    const s = await twoTurns({ guardStorePath: guardPath });
    const before = texts(ws.path(), 's1', 'main');
    await s.replaceHistoryWithCompaction([mk.raw({ type: 'compaction', encrypted_content: 'x' }), mk.user('q2')] as AgentInputItem[]);
    const [layer] = guard.layersOf(ws.path(), 's1', 'main');
    assert.equal(layer?.cause, 'our-compaction');
    assert.deepEqual(
      guard.layerItems(layer!.layerId).map((i) => i.messageData),
      before,
    );
    // Guarded: the look after our compaction credits it instead of recording the same removal again.
    look();
    await s.addItems([mk.assistant('a3')]);
    await s.replaceHistoryWithCompaction([mk.raw({ type: 'compaction', encrypted_content: 'y' })] as AgentInputItem[]);
    const l = look();
    assert.equal(l.layers.length, 0);
    assert.equal(l.credited, 1);
    assert.deepEqual(
      guard.layersOf(ws.path(), 's1', 'main').map((x) => x.cause),
      ['our-compaction', 'our-compaction'],
    );
    // A branch cleared by our wrapper (the JS SDK's compaction session clears and re-adds) is recorded too.
    await s.currentBranchSession().clearSession();
    assert.equal(guard.layersOf(ws.path(), 's1', 'main').length, 3);
  });

  it('refuses to compact when what it replaces cannot be recorded: the branch stays as it was', async () => {
    const s = await twoTurns({ guardStorePath: ws.path() }); // the session file itself: not a guard store
    const before = texts(ws.path(), 's1', 'main');
    await assert.rejects(
      s.replaceHistoryWithCompaction([mk.user('only')]),
      (e: unknown) => e instanceof HistoryGuardError && e.problem === 'not-guard-store',
    );
    assert.deepEqual(texts(ws.path(), 's1', 'main'), before);
  });

  it('keeps the layers of a file replaced at its path under the old identity, and says so', async () => {
    const s = await twoTurns();
    look();
    await s.popItem();
    s.close();
    look();
    reader?.close();
    reader = undefined;
    // Another file renamed over the path (a restore from backup, a copy), with nothing of the old one's beside it.
    const other = join(ws.dir, 'other.db');
    withDb(ws.path(), (db) => db.prepare('VACUUM INTO ?').run(other));
    for (const sidecar of ['-wal', '-shm']) rmSync(ws.path() + sidecar, { force: true });
    renameSync(other, ws.path());
    const l = look();
    assert.equal(l.kind, 'first');
    // The pop's layer, and the old file's list as last seen (3 items, none removed): both under the old identity.
    const [lastSeen, layer] = guard.layersOf(ws.path(), 's1', 'main');
    assert.deepEqual([lastSeen?.itemCount, lastSeen?.removedCount, lastSeen?.oldIdentity], [3, 0, true]);
    assert.equal(layer?.oldIdentity, true);
    assert.ok(layer!.replacedMs !== null);
    await assert.rejects(
      restoreLayerAsBranch(guard, layer!.layerId),
      (e: unknown) => e instanceof HistoryGuardError && e.problem === 'invalid' && /replaced/.test(e.message),
    );
    // Named explicitly, it restores into the file there now.
    const restored = await restoreLayerAsBranch(guard, layer!.layerId, { sessionPath: ws.path(), branchName: 'from-old-file' });
    assert.equal(restored.items, 4);
  });

  it('restores a layer as a new branch in one transaction, rows as Python numbers them, existing rows untouched', async () => {
    const s = await twoTurns();
    const before = texts(ws.path(), 's1', 'main');
    look();
    await s.popItem();
    await s.popItem();
    s.close();
    const { layers } = look();
    const others = query(ws.path(), 'SELECT * FROM message_structure ORDER BY id');
    const restored = await restoreLayerAsBranch(guard, layers[0]!.layerId, { branchName: 'before-pop' });
    assert.equal(restored.branchId, 'before-pop');
    assert.deepEqual(
      query(ws.path(), 'SELECT * FROM message_structure WHERE id <= ? ORDER BY id', (others.at(-1) as { id: number }).id),
      others,
    );
    const rows = query<{ message_type: string; user_turn_number: number; branch_turn_number: number }>(
      ws.path(),
      "SELECT message_type, user_turn_number, branch_turn_number FROM message_structure WHERE branch_id = 'before-pop' ORDER BY sequence_number",
    );
    assert.deepEqual(
      rows.map((r) => [r.message_type, r.user_turn_number, r.branch_turn_number]),
      [
        ['user', 1, 1],
        ['assistant', 1, 1],
        ['user', 2, 2],
        ['assistant', 2, 2],
      ],
    );
    // Byte for byte the texts the file held, read back by the session class as Python's session reads them.
    assert.deepEqual(texts(ws.path(), 's1', 'before-pop'), before);
    const fresh = ws.open({ createTables: false });
    assert.deepEqual(
      await fresh.getStoredItems(null, 'before-pop'),
      before.map((t) => JSON.parse(t) as unknown),
    );
    // A name the session ever used is refused, and nothing is written.
    const count = query(ws.path(), 'SELECT COUNT(*) AS n FROM message_structure');
    await assert.rejects(restoreLayerAsBranch(guard, layers[0]!.layerId, { branchName: 'main' }), /already been used/);
    assert.deepEqual(query(ws.path(), 'SELECT COUNT(*) AS n FROM message_structure'), count);
  });

  it('refuses a restore of text that is not a stored item, writing nothing', async () => {
    const s = await twoTurns();
    const count = query(ws.path(), 'SELECT COUNT(*) AS n FROM message_structure');
    await assert.rejects(s.restoreBranch(['{"role": "user", "content": "ok"}', 'not json'], 'bad'), /Item 2 of the restored branch/);
    assert.deepEqual(query(ws.path(), 'SELECT COUNT(*) AS n FROM message_structure'), count);
    assert.deepEqual(query(ws.path(), "SELECT * FROM branch_reservations WHERE branch_id = 'bad'"), []);
  });

  it('says which layer is unknown', () => {
    assert.throws(
      () => guard.layerItems(7),
      (e: unknown) => e instanceof HistoryGuardError && e.problem === 'unknown-layer',
    );
  });

  it('refuses a read-only place with a typed error (the guard is off, and says why)', async function () {
    this.timeout(30000);
    const dir = join(ws.dir, 'locked');
    mkdirSync(dir);
    chmodSync(dir, 0o555);
    try {
      const run = runSupportScript('guardReadOnlyChild.ts', [join(dir, 'guard.db')], 25000);
      const out = await run.done;
      const report = JSON.parse(out.stdout) as { ok: boolean; problem?: string; message?: string };
      assert.equal(report.ok, false, out.stderr);
      assert.equal(report.problem, 'read-only');
      assert.match(report.message ?? '', /guard is off/);
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  it('reports its disk use', async () => {
    (await twoTurns()).close();
    look();
    const use = guard.diskUse();
    assert.equal(use.items, 4);
    assert.equal(use.listRows, 4);
    assert.ok(use.fileBytes !== null && use.fileBytes > 0);
    assert.equal(use.itemTextChars, texts(ws.path(), 's1', 'main').join('').length);
  });
});
