/**
 * The scale benchmark's generator (scripts/bench/scaleFiles.ts) writes with raw SQL what the store would write: a
 * small plan of each file shape, replayed through `AdvancedSQLiteSession` (`addItems`, `storeRunUsage`,
 * `createBranchFromTurn`, `switchToBranch`), must leave every table with the same rows, timestamps aside.
 */
import { strict as assert } from 'node:assert';
import { existsSync, writeFileSync } from 'node:fs';
import type { AgentInputItem } from '@openai/agents';
import Database from 'better-sqlite3';
import { AdvancedSQLiteSession } from '../../../src/store';
import {
  dumpTables,
  ensureScaleFile,
  planOps,
  scaleFileSpec,
  turnContent,
  writeScaleFile,
  type FileSpec,
} from '../../../scripts/bench/scaleFiles';
import { Workspace } from '../../support/sessionHelpers';

/** The same plan through the store's public API. */
async function replayThroughStore(path: string, spec: FileSpec): Promise<void> {
  // All instances exist before any row, so the constructor's reservation backfill (spec §8.1) finds nothing to do.
  const sessions = spec.sessions.map((s) => new AdvancedSQLiteSession({ sessionId: s.sessionId, dbPath: path, createTables: true }));
  try {
    for (const op of planOps(spec)) {
      const s = sessions[op.sessionIndex]!;
      if (op.kind === 'branch') {
        if (s.getCurrentBranchId() !== op.source) await s.switchToBranch(op.source);
        assert.equal(await s.createBranchFromTurn(op.atTurn, op.name), op.name);
        continue;
      }
      if (s.getCurrentBranchId() !== op.branch) await s.switchToBranch(op.branch);
      const content = turnContent(op.sessionIndex, op.branch, op.turn);
      await s.addItems(content.items as unknown as AgentInputItem[]);
      const u = content.usage;
      if (u) {
        await s.storeRunUsage({
          state: {
            usage: {
              requests: u.requests,
              inputTokens: u.inputTokens,
              outputTokens: u.outputTokens,
              totalTokens: u.totalTokens,
              inputTokensDetails: [{ cached_tokens: u.cachedTokens }],
              outputTokensDetails: [{ reasoning_tokens: u.reasoningTokens }],
            },
          },
        });
      }
    }
  } finally {
    for (const s of sessions) s.close();
  }
}

describe('bench scale files: the generator writes the store format', function () {
  this.timeout(120_000);
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-scale-')));
  afterEach(() => ws.cleanup());

  const cases: [string, FileSpec][] = [
    // 52 turns: forks at 39, 23, 5 and two nested ones; turn 50 has no usage row.
    ['A (one session, nested branches)', scaleFileSpec('A', 0.00052)],
    // Two sessions of 50 turns, written turn by turn across them.
    ['B (sessions interleaved)', scaleFileSpec('B', 0.001)],
    ['C (one long session)', scaleFileSpec('C', 0.0002)],
    // 40 turns on main; branches of 4 own turns forked at turns 2 and 4, one of them inside l1's own turns.
    ['L (long-lived branches forked early)', scaleFileSpec('L', 0.0004)],
  ];
  for (const [name, spec] of cases) {
    it(`${name}: same rows as the store writes`, async () => {
      const generated = ws.path('generated.db');
      const stored = ws.path('stored.db');
      const stats = writeScaleFile(generated, spec);
      await replayThroughStore(stored, spec);
      const g = dumpTables(generated);
      const s = dumpTables(stored);
      assert.deepEqual(Object.keys(g).sort(), Object.keys(s).sort());
      for (const table of Object.keys(s)) assert.deepEqual(g[table], s[table], `table ${table} differs`);
      // The comparison is not vacuous: the tables hold what the plan says.
      const turns = spec.sessions.reduce((n, x) => n + x.turns + x.branches.reduce((m, b) => m + b.ownTurns, 0), 0);
      assert.equal(s.agent_messages!.length, 4 * turns);
      assert.equal(stats.messages, 4 * turns);
      assert.equal(s.message_structure!.length, stats.structureRows);
      assert.equal(s.turn_usage!.length, stats.usageRows);
      assert.ok(stats.structureRows > stats.messages || spec.sessions.every((x) => x.branches.length === 0));
      assert.deepEqual(g.journal_mode, ['wal']);
    });
  }

  it('the comparison catches a one-column drift', async () => {
    const spec = scaleFileSpec('C', 0.0001);
    const generated = ws.path('generated.db');
    const stored = ws.path('stored.db');
    writeScaleFile(generated, spec);
    await replayThroughStore(stored, spec);
    const db = new Database(generated);
    db.prepare("UPDATE message_structure SET tool_name = 'other' WHERE message_type = 'function_call' AND id = 2").run();
    db.close();
    assert.notDeepEqual(dumpTables(generated).message_structure, dumpTables(stored).message_structure);
  });

  it('the A tree has a branch forked from a branch, and B interleaves its sessions', () => {
    const a = scaleFileSpec('A', 1);
    assert.equal(a.sessions[0]!.turns, 100_000);
    assert.equal(a.sessions[0]!.branches.length, 5);
    assert.ok(a.sessions[0]!.branches.some((b) => b.from !== 'main'));
    const b = scaleFileSpec('B', 1);
    assert.equal(b.sessions.length, 2000);
    const firstOps = [...planOps(scaleFileSpec('B', 0.001))].slice(0, 2);
    assert.deepEqual(
      firstOps.map((o) => o.sessionIndex),
      [0, 1],
    );
    assert.equal(scaleFileSpec('C', 1).sessions[0]!.turns, 250_000);
    // L: every branch runs 1,000 turns of its own after a fork in main's first tenth; one forks from another branch.
    const l = scaleFileSpec('L', 1);
    assert.equal(l.sessions[0]!.turns, 100_000);
    assert.equal(l.sessions[0]!.branches.length, 5);
    assert.ok(l.sessions[0]!.branches.every((x) => x.ownTurns === 1_000 && x.atTurn <= 10_000));
    assert.ok(l.sessions[0]!.branches.some((x) => x.from !== 'main'));
  });

  it('reuses a cached file and keys the cache by the parameters', () => {
    const first = ensureScaleFile(ws.dir, 'C', 0.0001);
    assert.equal(first.generated, true);
    assert.ok(existsSync(first.path));
    // A read-only reader leaves (empty) -wal and -shm files behind; the cached file is still reused.
    const reader = new Database(first.path, { readonly: true });
    reader.prepare('SELECT COUNT(*) FROM agent_messages').get();
    reader.close();
    writeFileSync(`${first.path}-wal`, '', { flag: 'a' });
    const again = ensureScaleFile(ws.dir, 'C', 0.0001);
    assert.equal(again.generated, false);
    assert.equal(again.path, first.path);
    const other = ensureScaleFile(ws.dir, 'C', 0.0002);
    assert.notEqual(other.path, first.path);
    assert.equal(other.generated, true);
  });
});
