/**
 * Kept counts and totals (src/store/inspector/keptTotals.ts) against the from-scratch queries: a `SessionDatabase`
 * opened with `keepTotals` answers the branch tree, the Tools tab (each branch and the whole session) and the Tokens
 * tab (each branch with its shared turns, and the session) once, then after every kind of write — from this process
 * and from another — its answers must equal those of a fresh connection that keeps nothing. Appends must be folded in
 * (not rebuilt), removals rebuilt. Runs on better-sqlite3 under `npx mocha`, and on node:sqlite through
 * scripts/runStoreSuites.mjs.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, renameSync } from 'node:fs';
import { openSessionDatabase, SessionDatabaseError, type SessionDatabase } from '../../../../src/store';
import { sharedTurnRanges } from '../../../../src/shared/turnOrigin';
import { runSupportScript } from '../../../support/childProcess';
import { Workspace } from '../../../support/sessionHelpers';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { keptTotalsWrites, seedKeptTotals, turnWithTool, type KeptTotalsWrite } from '../../../support/keptTotalsWrites';

/** Everything the kept totals feed, as the extension asks for it. */
function answers(db: SessionDatabase): unknown {
  const tree = db.getBranchTree('s1');
  const branches = tree.map((b) => b.branchId);
  // The view's own arguments: each branch's shared turns, and its fork turn as the first own turn to check for usage.
  const fromTurns = new Map(tree.filter((b) => b.forkTurn !== null).map((b) => [b.branchId, b.forkTurn!]));
  const tab = (branchId: string | null) =>
    db.getUsageTab(
      's1',
      branchId,
      {
        limit: 3,
        shared: branchId === null ? [] : sharedTurnRanges(tree, branchId),
      },
      { fromTurns, limit: 2 },
    );
  return {
    sessions: db.listSessions(),
    tree,
    tools: Object.fromEntries([...branches, null].map((b) => [String(b), db.getToolTotals('s1', b)])),
    tokens: Object.fromEntries([...branches, null].map((b) => [String(b), tab(b)])),
    // With nothing listed, the count of turns without usage comes from the usage rows counted (or kept) alone.
    missing: Object.fromEntries([...branches, null].map((b) => [String(b), db.getTurnsWithoutUsage('s1', b, { fromTurns, limit: 0 })])),
    sorted: db.getUsagePage('s1', null, { limit: 2, sort: 'cachedTokens', descending: true }),
  };
}

function fresh(path: string): unknown {
  const db = openSessionDatabase(path);
  try {
    return answers(db);
  } finally {
    db.close();
  }
}

/** Writes that remove or change rows in place (a usage row replaced included): the kept state must rebuild, never fold them in. */
const REBUILDS: ReadonlySet<KeptTotalsWrite> = new Set([
  'usageAgain',
  'popItem',
  'historyMutation',
  'compaction',
  'deleteBranch',
  'clearCurrentBranch',
  'clearSession',
]);

/** The first history transaction creates the table that records operation ids: a schema change drops everything kept. */
const SCHEMA_CHANGES: ReadonlySet<KeptTotalsWrite> = new Set(['historyTransaction']);

const ORDER = Object.keys(keptTotalsWrites) as KeptTotalsWrite[];

describe('kept counts and totals equal the from-scratch queries after every kind of write', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-kept-')));
  afterEach(() => ws.cleanup());

  for (const from of ['this process', 'another process'] as const) {
    it(`writes from ${from}`, async function () {
      this.timeout(120_000);
      const writer = ws.open();
      await seedKeptTotals(writer);
      // A second session, which the writes leave alone: the session list keeps both.
      await turnWithTool(ws.open({ sessionId: 's2' }), 'other_session', 4);
      const kept = ws.track(openSessionDatabase(ws.path(), { keepTotals: true }));
      assert.deepEqual(answers(kept), fresh(ws.path()), 'before any write');
      // One child for every write (each opens the session, writes and closes it): a child a write cost 2 s each.
      const child = from === 'another process' ? runSupportScript('keptTotalsWriter.ts', [ws.path()], 100_000) : undefined;
      for (const write of ORDER) {
        const before = kept.keptTotalsStats!;
        if (!child) await keptTotalsWrites[write](writer);
        else {
          child.child.stdin.write(`${write}\n`);
          await child.waitForLine(`done ${write}`);
        }
        assert.deepEqual(answers(kept), fresh(ws.path()), `after ${write} from ${from}`);
        const after = kept.keptTotalsStats!;
        if (REBUILDS.has(write)) assert.ok(after.rebuilt > before.rebuilt, `${write} rebuilt the kept state`);
        else if (SCHEMA_CHANGES.has(write)) assert.ok(after.started > before.started, `${write} started afresh`);
        else {
          assert.equal(after.rebuilt, before.rebuilt, `${write} was folded in, not rebuilt`);
          assert.ok(after.caughtUp > before.caughtUp, `${write} was noticed`);
        }
      }
      if (child) {
        child.child.stdin.end();
        const done = await child.done;
        assert.equal(done.code, 0, `the writing child: ${done.stderr}`);
      }
      // And after the session was cleared, it grows again from nothing.
      await turnWithTool(writer, 'after_clear', 9);
      assert.deepEqual(answers(kept), fresh(ws.path()), 'after a write following the clear');
    });
  }

  it('answers from what it kept while nothing was written, and forgets a replaced file', async () => {
    const writer = ws.open();
    await seedKeptTotals(writer);
    writer.close();
    const kept = ws.track(openSessionDatabase(ws.path(), { keepTotals: true }));
    const first = answers(kept);
    const stats = kept.keptTotalsStats!;
    assert.deepEqual(answers(kept), first);
    assert.deepEqual(kept.keptTotalsStats, stats, 'nothing started, caught up or rebuilt without a write');
    // Another file renamed over the path: the connection refuses to answer from the old file (or its kept totals).
    const other = ws.path('other.db');
    copyFileSync(ws.path(), other);
    const w2 = ws.open({ dbPath: other });
    await turnWithTool(w2, 'only_in_other', 1);
    w2.close();
    renameSync(other, ws.path());
    assert.throws(
      () => kept.getToolTotals('s1', null),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'replaced',
    );
    const reopened = ws.track(openSessionDatabase(ws.path(), { keepTotals: true }));
    assert.deepEqual(answers(reopened), fresh(ws.path()));
    assert.ok(reopened.getToolTotals('s1', null).some((t) => t.toolName === 'only_in_other'));
  });

  it('answers a file whose ids are not AUTOINCREMENT afresh: a popped row’s id handed out again is no new row', async () => {
    // Python's tables, less AUTOINCREMENT: SQLite may then reuse the largest id after it was deleted.
    const model = ws.open({ dbPath: ws.path('model.db') });
    await model.addItems([]);
    model.close();
    const ddl = openDatabase(ws.path('model.db'), { readonly: true });
    const statements = ddl
      .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, rowid")
      .all<{ sql: string }>()
      .map((r) => r.sql.replace(/\s+AUTOINCREMENT\b/gi, ''));
    ddl.close();
    const raw = openDatabase(ws.path());
    for (const sql of statements) raw.exec(sql);
    raw.close();
    const writer = ws.open();
    await seedKeptTotals(writer);
    const kept = ws.track(openSessionDatabase(ws.path(), { keepTotals: true }));
    assert.deepEqual(answers(kept), fresh(ws.path()));
    // The file's last row (side's answer) goes, and a call written next takes its id again: as many rows as before, and
    // none past the mark.
    await writer.switchToBranch('side');
    await writer.popItem();
    await writer.addItems([{ type: 'function_call', callId: 'again', name: 'reused_id', status: 'completed', arguments: '{}' } as never]);
    assert.deepEqual(answers(kept), fresh(ws.path()));
    assert.deepEqual(kept.keptTotalsStats, { started: 0, caughtUp: 0, rebuilt: 0 }, 'nothing was kept');
  });
});
