/**
 * Another process writes a session while this one reads it (spec §1: files are shared, even concurrently).
 * Every read must succeed and see whole batches; at the end nothing is lost and turns are numbered 1..N.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { Workspace } from '../../../support/sessionHelpers';

const TURNS = 150;
const ITEMS_PER_TURN = 4;
const WRITER = join(__dirname, '..', '..', '..', 'support', 'crossProcessWriter.ts');

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startWriter(dbPath: string, sessionId: string, turns: number): { done: Promise<ChildResult>; running: () => boolean } {
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', WRITER, dbPath, sessionId, String(turns)], {
    cwd: join(__dirname, '..', '..', '..', '..'),
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      exited = true;
      resolve({ code, stdout, stderr });
    });
  });
  const timer = setTimeout(() => child.kill(), 25000);
  void done.finally(() => clearTimeout(timer));
  return { done, running: () => !exited };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cross-process: a child process writes while this process reads', function () {
  this.timeout(30000);
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-xproc-')));
  afterEach(() => ws.cleanup());

  it(`reads without error while ${TURNS} turns are written, then finds every item and turns 1..${TURNS}`, async () => {
    const p = ws.path();
    ws.open({ dbPath: p }).close(); // initialise and claim the file
    const reader = ws.open({ dbPath: p, createTables: false });
    const writer = startWriter(p, 's1', TURNS);

    let reads = 0;
    let partialReads = 0;
    let lastCount = 0;
    while (writer.running()) {
      const items = (await reader.getItems()) as unknown as Record<string, unknown>[];
      assert.equal(items.length % ITEMS_PER_TURN, 0, `a read saw a partial batch: ${items.length} items`);
      assert.ok(items.length >= lastCount, 'items never disappear');
      lastCount = items.length;
      for (let i = 0; i < items.length; i += ITEMS_PER_TURN) {
        assert.deepEqual(items[i], { role: 'user', content: `question ${i / ITEMS_PER_TURN + 1}` });
      }
      const branches = await reader.listBranches();
      assert.ok(branches.length <= 1);
      if (branches[0]) {
        assert.equal(branches[0].branchId, 'main');
        assert.equal(branches[0].messageCount, branches[0].userTurns * ITEMS_PER_TURN);
      }
      const turns = await reader.getConversationTurns();
      assert.deepEqual(
        turns.map((t) => t.turn),
        turns.map((_, i) => i + 1),
      );
      const newest = await reader.getItems(2);
      assert.ok(newest.length === 0 || newest.length === 2);
      reads++;
      if (items.length > 0 && items.length < TURNS * ITEMS_PER_TURN) partialReads++;
      await pause(5);
    }
    const result = await writer.done;
    assert.equal(result.code, 0, `writer failed: ${result.stderr}`);
    assert.deepEqual(JSON.parse(result.stdout), { turns: TURNS, logged: [] });
    assert.ok(reads > 0);
    // The reads really overlapped the writes (some saw a part of the turns).
    assert.ok(partialReads > 0, `no read saw a partial state (${reads} reads)`);

    // Final state, read through the long-lived reader and a fresh instance.
    const fresh = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p }));
    for (const s of [reader, fresh]) {
      const items = await s.getItems();
      assert.equal(items.length, TURNS * ITEMS_PER_TURN);
      assert.deepEqual(
        (await s.getConversationTurns()).map((t) => [t.turn, t.content]),
        Array.from({ length: TURNS }, (_, i) => [i + 1, `question ${i + 1}`]),
      );
      const usage = await s.getSessionUsage();
      assert.deepEqual(usage, {
        requests: TURNS,
        inputTokens: (TURNS * (TURNS + 1)) / 2,
        outputTokens: TURNS,
        totalTokens: (TURNS * (TURNS + 1)) / 2 + TURNS,
        totalTurns: TURNS,
      });
      assert.deepEqual(
        (await s.getTurnUsage()).map((r) => r.userTurnNumber),
        Array.from({ length: TURNS }, (_, i) => i + 1),
      );
      assert.equal((await s.getToolUsage()).length, TURNS);
      assert.deepEqual(
        (await s.listBranches()).map((b) => [b.branchId, b.messageCount, b.userTurns]),
        [['main', TURNS * ITEMS_PER_TURN, TURNS]],
      );
    }
  });

  it('a reader and a writer in this process and a writer child interleave without losing items', async () => {
    const p = ws.path();
    const local = ws.open({ dbPath: p, sessionId: 'local' });
    const writer = startWriter(p, 's1', 20);
    let localTurns = 0;
    while (writer.running()) {
      await local.addItems([{ role: 'user', content: `local ${++localTurns}` } as never]);
      await pause(10);
    }
    const result = await writer.done;
    assert.equal(result.code, 0, result.stderr);
    const child = ws.open({ dbPath: p, createTables: false });
    assert.equal((await child.getItems()).length, 20 * ITEMS_PER_TURN);
    assert.deepEqual(
      (await local.getConversationTurns()).map((t) => t.turn),
      Array.from({ length: localTurns }, (_, i) => i + 1),
    );
  });
});
