/**
 * Scratch storage (src/agents/check/scratchStore.ts): a case's scratch file holds its branch up to and including its
 * turn, numbered as the source numbers it, in the Python SDK's format — and nothing else of the user's file, so its
 * cost is the case's prefix, not the file's size.
 */
import { strict as assert } from 'node:assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckCase } from '../../../../src/agents/check/checkTypes';
import { ScratchFolder, TurnChangedError } from '../../../../src/agents/check/scratchStore';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { tempDir } from '../../../support/tempFiles';
import { seedCheckSession, TURNS, turnKey, user } from './checkAgentKit';

/** A case on `turn` of `branchId` whose user message is `text`. */
function caseOn(branchId: string, turn: number, text: string, sessionId = 's1'): CheckCase {
  return {
    id: `${sessionId}/${branchId}/${turn}`,
    sessionId,
    branchId,
    turn,
    contentKey: turnKey(text),
    verdict: 'good',
    input: text,
    expected: { answer: null, trajectory: [] },
    note: null,
    tags: [],
  };
}

async function storedItems(dbPath: string, branchId = 'main', sessionId = 's1'): Promise<unknown[]> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath, readonly: true });
  try {
    return await s.getStoredItems(undefined, branchId);
  } finally {
    s.close();
  }
}

describe('scratch storage of a check', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-check-scratch-');
  let folder: ScratchFolder;
  let db: SessionDatabase | undefined;
  let n = 0;
  beforeEach(() => (folder = ScratchFolder.create(tmp.dir)));
  afterEach(async () => {
    db?.close();
    db = undefined;
    await folder.dispose();
  });
  after(() => tmp.cleanup());

  it("holds the case's branch through its turn, as stored, and numbers the turn as the source does", async () => {
    const file = join(tmp.dir, `a-${++n}.db`);
    await seedCheckSession(file);
    db = openSessionDatabase(file, { readonly: true });
    const scratch = await folder.prepare(db, caseOn('main', 3, 'Weather in Lyon?'), 1);
    assert.equal(scratch.turn, 3);
    const source = await storedItems(file);
    // Turns 1…3 of the source: 2 + 4 + 4 items, exactly as stored; turn 4 is not copied.
    assert.deepEqual(await storedItems(scratch.dbPath), source.slice(0, 10));
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: scratch.dbPath, readonly: true });
    const src = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, readonly: true });
    try {
      for (const t of [1, 2, 3]) assert.deepEqual(await s.getTurnStoredItems(t), await src.getTurnStoredItems(t), `turn ${t}`);
      assert.deepEqual(await s.getTurnStoredItems(4), []);
    } finally {
      s.close();
      src.close();
    }
  });

  it("a forked branch's case gets the parent's shared turns and the branch's own, numbered as on the branch", async () => {
    const file = join(tmp.dir, `b-${++n}.db`);
    await seedCheckSession(file);
    const w = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file });
    await w.createBranchFromTurn(2, 'alt');
    await w.addItems([user('Weather in Oslo?'), { role: 'assistant', content: 'Snow.' }] as never);
    await w.addItems([user('And Bergen?'), { role: 'assistant', content: 'Rain.' }] as never);
    w.close();
    db = openSessionDatabase(file, { readonly: true });
    const scratch = await folder.prepare(db, caseOn('alt', 3, 'And Bergen?'), 1);
    assert.equal(scratch.turn, 3);
    const texts = (await storedItems(scratch.dbPath)).filter((i) => (i as { role?: string }).role === 'user');
    assert.deepEqual(
      texts.map((i) => (i as { content: unknown }).content),
      ['Hello', 'Weather in Oslo?', 'And Bergen?'],
    );
  });

  it('refuses a turn that changed since the cases were read', async () => {
    const file = join(tmp.dir, `c-${++n}.db`);
    await seedCheckSession(file);
    db = openSessionDatabase(file, { readonly: true });
    await assert.rejects(folder.prepare(db, caseOn('main', 3, 'Weather in Nice?'), 1), TurnChangedError);
    await assert.rejects(folder.prepare(db, caseOn('main', 7, 'Weather in Lyon?'), 2), /turn 7 is gone/);
  });

  it('copies only the prefix: a case on turn 3 of a long branch of a big file makes a small scratch file', async () => {
    const file = join(tmp.dir, `big-${++n}.db`);
    const w = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, createTables: true });
    const filler = 'x'.repeat(4000);
    for (const [q, rest] of TURNS.slice(0, 3)) await w.addItems([user(q), ...rest] as never);
    // 2,000 more turns of 8 KB each after the case's turn, and another session as big: 32 MB the case does not need.
    for (let batch = 0; batch < 20; batch++) {
      const items: unknown[] = [];
      for (let i = 0; i < 100; i++) items.push(user(`${filler} ${batch}-${i}`), { role: 'assistant', content: filler });
      await w.addItems(items as never);
    }
    w.close();
    const other = new AdvancedSQLiteSession({ sessionId: 'other', dbPath: file });
    const items: unknown[] = [];
    for (let i = 0; i < 2000; i++) items.push(user(`${filler} ${i}`), { role: 'assistant', content: filler });
    await other.addItems(items as never);
    other.close();
    db = openSessionDatabase(file, { readonly: true });
    const t0 = performance.now();
    const scratch = await folder.prepare(db, caseOn('main', 3, 'Weather in Lyon?'), 1);
    const ms = performance.now() - t0;
    const big = statSync(file).size;
    const small = statSync(scratch.dbPath).size + sizeOr0(`${scratch.dbPath}-wal`);
    assert.equal(scratch.items, 10);
    assert.ok(big > 30_000_000, `the source is ${big} bytes`);
    assert.ok(small < 300_000, `the scratch file is ${small} bytes for 10 items`);
    console.log(`      (scratch for turn 3 of a ${(big / 1e6).toFixed(1)} MB file: ${(small / 1e3).toFixed(0)} KB in ${ms.toFixed(0)} ms)`);
  });
});

function sizeOr0(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
