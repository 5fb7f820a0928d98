/**
 * What the history guard must never lose (docs/history-guard.md), each case a way it once did: a file deleted and
 * recreated at a reused inode taken for the old one, rows another process removed during a first look that reads in
 * batches, a file replaced at its path leaving the old file's list unreachable, a re-point hidden by growth or equal
 * counts, a deleted guard store written on until restart, one undecodable item refusing a whole layer's restore, the
 * guard store's lock blamed on the session file, two windows recording one pop twice, one oversized branch turning
 * the guard off for the whole file, and a restore named `main`.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { GUARD_LIMITS, HistoryGuardStore } from '../../../../src/store/guard/guardStore';
import { GUARD_BATCH_ROWS, observeSessionFile } from '../../../../src/store/guard/guardObserver';
import { guardLayers, lookAtGuardedFile, stopLookingAt } from '../../../../src/store/guard/guardedFiles';
import { restoreLayerAsBranch } from '../../../../src/store/guard/layerRestore';
import { Workspace, branchTexts, mk, query, withDb } from '../../../support/sessionHelpers';

const texts = branchTexts;

describe('history guard: what it keeps', () => {
  let ws: Workspace;
  let guard: HistoryGuardStore;
  const readers: SessionDatabase[] = [];
  const guardPath = () => join(ws.dir, 'guard.db');
  beforeEach(() => {
    ws = new Workspace('asi-guard-keeps-');
    guard = HistoryGuardStore.open(guardPath());
  });
  afterEach(() => {
    for (const r of readers.splice(0)) r.close();
    stopLookingAt(ws.path());
    guard.close();
    ws.cleanup();
  });
  const reader = (): SessionDatabase => {
    const r = openSessionDatabase(ws.path(), { readonly: true });
    readers.push(r);
    return r;
  };
  const kept = (): string[] =>
    guard.db
      .prepare('SELECT message_data FROM guard_items')
      .all<{ message_data: string }>()
      .map((r) => r.message_data);

  async function turns(names: string[], sessionId = 's1'): Promise<AdvancedSQLiteSession> {
    const s = ws.track(new AdvancedSQLiteSession({ sessionId, dbPath: ws.path(), createTables: true }));
    for (const n of names) await s.addItems([mk.user(`${n} q`), mk.assistant(`${n} a`)]);
    return s;
  }

  /** Deletes the session file and writes another at its path; the store is then told it has the old one's inode. */
  async function recreateAtSameInode(names: string[]): Promise<AdvancedSQLiteSession> {
    for (const r of readers.splice(0)) r.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(ws.path() + suffix, { force: true });
    const s = await turns(names);
    const st = statSync(ws.path(), { bigint: true });
    // What ext4 does when it reuses the inode, made certain: the record now names the new file's device and inode.
    guard.db.prepare('UPDATE guard_files SET dev = ?, ino = ?').run(st.dev.toString(), st.ino.toString());
    return s;
  }

  it('takes a file deleted and recreated at a reused inode for another file, by its birth time', async () => {
    (await turns(['OLD1', 'OLD2'])).close();
    assert.equal(observeSessionFile(guard, reader()).kind, 'first');
    // The old file's birth time as the store noted it (one that differs from the new file's, whatever the clock did).
    guard.db.prepare("INSERT OR REPLACE INTO guard_meta (key, value) VALUES ('birth:1', '1')").run();
    const s = await recreateAtSameInode(['NEW1', 'NEW2']);
    const newBranch = texts(ws.path(), 's1', 'main');
    assert.equal(observeSessionFile(guard, reader()).kind, 'first');
    assert.ok(kept().some((t) => t.includes('NEW1 q')));
    await s.popItem();
    const l = observeSessionFile(guard, readers.at(-1)!);
    assert.equal(l.layers.length, 1);
    assert.deepEqual(
      guard.layerItems(l.layers[0]!.layerId).map((i) => i.messageData),
      newBranch,
    );
    // The old file's list is a layer of the old identity: restoring it into the new file asks for the file by name.
    const old = guard.layersOf(ws.path(), 's1').find((x) => x.oldIdentity);
    assert.ok(old);
    await assert.rejects(restoreLayerAsBranch(guard, old.layerId), /replaced/);
  });

  it('takes a recreated file with the same counts for another file by its rows, where no birth time tells', async () => {
    (await turns(['OLD1', 'OLD2'])).close();
    observeSessionFile(guard, reader());
    guard.db.prepare("DELETE FROM guard_meta WHERE key LIKE 'birth:%'").run(); // a platform without birth times
    const s = await recreateAtSameInode(['NEW1', 'NEW2']); // ids, sessions, branches and places as the old file's
    guard.db.prepare("DELETE FROM guard_meta WHERE key LIKE 'birth:%'").run();
    const l = observeSessionFile(guard, reader());
    assert.equal(l.kind, 'first');
    assert.equal(l.anotherFile, true);
    assert.ok(kept().some((t) => t.includes('NEW2 a')));
    const old = guard.layersOf(ws.path(), 's1').filter((x) => x.oldIdentity);
    assert.equal(old.length, 1);
    assert.ok(guard.layerItems(old[0]!.layerId).every((i) => i.messageData.includes('OLD')));
    s.close();
  });

  it('keeps every row a first look read in batches, though another process removed some between two batches', async () => {
    const pairs = Math.ceil(GUARD_BATCH_ROWS / 2) + 100;
    for (const sid of ['s1', 's2']) {
      const s = ws.track(new AdvancedSQLiteSession({ sessionId: sid, dbPath: ws.path(), createTables: true }));
      const items = [];
      for (let i = 1; i <= pairs; i++) items.push(mk.user(`${sid} q${i}`), mk.assistant(`${sid} a${i}`));
      await s.addItems(items);
      s.close();
    }
    const r = reader();
    const original = r.readWith.bind(r);
    let calls = 0;
    r.readWith = <T>(fn: Parameters<SessionDatabase['readWith']>[0]): T => {
      const v = original(fn) as T;
      if (++calls === 2)
        withDb(ws.path(), (db) =>
          db.exec(`DELETE FROM message_structure WHERE session_id = 's2';
                   DELETE FROM agent_messages WHERE session_id = 's2';`),
        );
      return v;
    };
    observeSessionFile(guard, r);
    r.readWith = original;
    const all = kept();
    const missing = [...Array(pairs).keys()].filter((i) => !all.some((t) => t.includes(`"s2 q${i + 1}"`)));
    assert.equal(missing.length, 0);
    const next = observeSessionFile(guard, r);
    assert.deepEqual(
      next.layers.map((l) => [l.sessionId, l.removedCount]),
      [['s2', pairs * 2]],
    );
  });

  it("keeps a replaced file's list as last seen readable, as layers of the old identity", async () => {
    const s = await turns(['1', '2']);
    withDb(ws.path(), (db) => db.prepare('VACUUM INTO ?').run(join(ws.dir, 'backup.db')));
    await s.addItems([mk.user('3 q'), mk.assistant('3 a')]);
    const seen = texts(ws.path(), 's1', 'main');
    assert.equal(lookAtGuardedFile(ws.path(), guardPath()).kind, 'first');
    s.close();
    withDb(ws.path(), (db) => db.exec('PRAGMA wal_checkpoint(TRUNCATE)'));
    copyFileSync(join(ws.dir, 'backup.db'), join(ws.dir, 'restore.tmp'));
    renameSync(join(ws.dir, 'restore.tmp'), ws.path());
    assert.equal(lookAtGuardedFile(ws.path(), guardPath()).kind, 'first');
    const layers = guardLayers(guardPath(), ws.path(), 's1');
    assert.equal(layers.length, 1);
    assert.deepEqual([layers[0]!.oldIdentity, layers[0]!.removedCount, layers[0]!.replacedMs !== null], [true, 0, true]);
    assert.deepEqual(
      guard.layerItems(layers[0]!.layerId).map((i) => i.messageData),
      seen,
    );
  });

  it('sees a row re-pointed to an existing message though the counts stay the same', async () => {
    const s = await turns(['1', '2']);
    const r = reader();
    observeSessionFile(guard, r);
    withDb(ws.path(), (db) => db.exec('UPDATE message_structure SET message_id = 4 WHERE id = 2'));
    const l = observeSessionFile(guard, r);
    assert.equal(l.kind, 'rescanned');
    assert.equal(l.layers.length, 1);
    assert.match(guard.layerItems(l.layers[0]!.layerId)[1]!.messageData, /1 a/);
    s.close();
  });

  it('sees a rewrite whose new message a fork also holds, though the file looks as if it only grew', async () => {
    const s = ws.open();
    await s.addItems([mk.user('q1'), mk.call('get_weather', { callId: 'c1' }), mk.output('c1'), mk.assistant('a1')]);
    await s.addItems([mk.user('q2'), mk.assistant('a2')]);
    await s.createBranchFromTurn(2, 'alt'); // holds the old call: the rewrite leaves its message in the file
    await s.switchToBranch('main');
    const r = reader();
    observeSessionFile(guard, r);
    await s.applyHistoryMutations({
      mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: mk.call('get_forecast', { callId: 'c1' }) }],
    } as never);
    const rewritten = texts(ws.path(), 's1', 'main');
    await s.createBranchFromTurn(2, 'alt2'); // copies main's rows: a new row holds the new call too
    const l = observeSessionFile(guard, r);
    assert.deepEqual(
      l.layers.map((x) => x.branchId),
      ['main'],
    );
    assert.match(guard.layerItems(l.layers[0]!.layerId)[1]!.messageData, /get_weather/);
    // The list now holds the new call: a later removal's layer is the branch as it was.
    withDb(ws.path(), (db) => db.exec("DELETE FROM message_structure WHERE branch_id = 'main'"));
    const later = observeSessionFile(guard, r).layers.find((x) => x.branchId === 'main');
    assert.deepEqual(
      guard.layerItems(later!.layerId).map((i) => i.messageData),
      rewritten,
    );
  });

  it('opens a guard store deleted under it again, so what a look records is in the file at the path', async () => {
    const s = await turns(['1', '2']);
    lookAtGuardedFile(ws.path(), guardPath());
    guard.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(guardPath() + suffix, { force: true });
    await s.addItems([mk.user('3 q')]);
    lookAtGuardedFile(ws.path(), guardPath());
    assert.equal(existsSync(guardPath()), true);
    guard = HistoryGuardStore.open(guardPath());
    assert.ok(kept().some((t) => t.includes('3 q')));
    // Replaced by a copy: the layer of the next look goes into the file at the path.
    guard.close();
    copyFileSync(guardPath(), `${guardPath()}.tmp`);
    renameSync(`${guardPath()}.tmp`, guardPath());
    await s.popItem();
    assert.equal(lookAtGuardedFile(ws.path(), guardPath()).layers.length, 1);
    guard = HistoryGuardStore.open(guardPath());
    assert.equal(guard.layersOf(ws.path(), 's1').length, 1);
  });

  it('restores a layer holding an item Python cannot decode, that item as the file held it', async () => {
    const s = await turns(['1']);
    withDb(ws.path(), (db) =>
      db.exec(`INSERT INTO agent_messages (session_id, message_data) VALUES ('s1', '{"role": "user", "content": "trunc');
               INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number, branch_turn_number)
               VALUES ('s1', last_insert_rowid(), 'main', 'user', 3, 2, 2);`),
    );
    await s.addItems([mk.assistant('a2'), mk.user('q3')]);
    const before = texts(ws.path(), 's1', 'main');
    const r = reader();
    observeSessionFile(guard, r);
    await s.popItem();
    const { layers } = observeSessionFile(guard, r);
    const restored = await restoreLayerAsBranch(guard, layers[0]!.layerId, { branchName: 'back' });
    assert.equal(restored.items, 5);
    assert.deepEqual(texts(ws.path(), 's1', 'back'), before);
    s.close();
  });

  it('names the guard store, not the session file, when the guard store is locked during our compaction', async function () {
    this.timeout(30000);
    const s = await turns(['1', '2']);
    const sessionWithGuard = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), guardStorePath: guardPath() }));
    const holder = openDatabase(guardPath(), {});
    holder.exec("BEGIN EXCLUSIVE; INSERT INTO guard_meta (key, value) VALUES ('x', 'y');");
    try {
      await assert.rejects(sessionWithGuard.replaceHistoryWithCompaction([mk.user('only')]), (e: unknown) => {
        const message = (e as Error).message;
        return message.includes(guardPath()) && message.includes('history guard store') && !message.startsWith(ws.path());
      });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    s.close();
  });

  it('records one pop once, though two windows look at it at the same time', async () => {
    const s = await turns(['1', '2']);
    const other = HistoryGuardStore.open(guardPath());
    try {
      const a = reader();
      const b = reader();
      observeSessionFile(guard, a);
      observeSessionFile(other, b);
      await s.popItem();
      const original = a.readWith.bind(a);
      let calls = 0;
      a.readWith = <T>(fn: Parameters<SessionDatabase['readWith']>[0]): T => {
        const v = original(fn) as T;
        if (++calls === 2) observeSessionFile(other, b); // window B's look, between A's read and A's write
        return v;
      };
      observeSessionFile(guard, a);
      assert.equal(guard.layersOf(ws.path(), 's1').length, 1);
    } finally {
      other.close();
    }
  });

  it('guards the other branches and sessions when a branch is past the layer bound', async () => {
    const bound = GUARD_LIMITS.itemsPerLayer;
    (GUARD_LIMITS as { itemsPerLayer: number }).itemsPerLayer = 5;
    try {
      const big = await turns(['1', '2', '3'], 'big');
      const small = await turns(['s1'], 'small');
      const r = reader();
      observeSessionFile(guard, r);
      await big.popItem();
      const l = observeSessionFile(guard, r);
      assert.deepEqual(
        l.skipped.map((x) => [x.sessionId, x.itemCount, x.removedCount]),
        [['big', 6, 1]],
      );
      await small.popItem();
      assert.equal(observeSessionFile(guard, r).layers.length, 1);
      assert.equal(guard.layersOf(ws.path(), 'small').length, 1);
    } finally {
      (GUARD_LIMITS as { itemsPerLayer: number }).itemsPerLayer = bound;
    }
  });

  it('refuses to restore a layer as main, also once another writer emptied main', async () => {
    const s = await turns(['1', '2']);
    const r = reader();
    observeSessionFile(guard, r);
    await s.popItem();
    const id = observeSessionFile(guard, r).layers[0]!.layerId;
    s.close();
    // Another writer removed every row (and, as a file Python wrote, main was never reserved).
    withDb(ws.path(), (db) => db.exec("DELETE FROM message_structure; DELETE FROM branch_reservations WHERE branch_id = 'main';"));
    await assert.rejects(restoreLayerAsBranch(guard, id, { branchName: 'main' }), /already been used/);
    assert.equal(query(ws.path(), 'SELECT * FROM message_structure').length, 0);
  });
});
