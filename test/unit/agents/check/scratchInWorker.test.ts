/**
 * The extension's check copies each case's branch prefix in the store worker (`RunStore.copyBranchPrefix`, the
 * extension's `workerRunStore`): reads and writes on the worker's own connections, so a big prefix never blocks the
 * host's thread. A 10 ms timer on this thread (the host's, here) measures the longest block while the same prefix is
 * copied three ways: in this thread (the CLI's way), through the worker without its copy (pages read in the worker,
 * handed through this thread to the worker's write: how the extension did it before), and by the worker's copy.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckCase } from '../../../../src/agents/check/checkTypes';
import { ScratchFolder } from '../../../../src/agents/check/scratchStore';
import type { RunStore } from '../../../../src/agents/runSession';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { useWorkerClient } from '../../../support/workerClient';
import { storedItems, turnKey, user } from './checkAgentKit';

/** Runs `fn` with a 10 ms timer on this thread; `worstGap` is the longest it was kept waiting. */
async function watchTimer<T>(fn: () => Promise<T>): Promise<{ value: T; worstGap: number; took: number }> {
  let last = performance.now();
  let worstGap = 0;
  const tick = setInterval(() => {
    const t = performance.now();
    worstGap = Math.max(worstGap, t - last);
    last = t;
  }, 10);
  const started = performance.now();
  try {
    const value = await fn();
    const took = performance.now() - started;
    return {
      value,
      get worstGap() {
        return worstGap;
      },
      took,
    };
  } finally {
    clearInterval(tick);
    // A block that lasted to the end is seen by no tick: it counts up to now.
    worstGap = Math.max(worstGap, performance.now() - last);
  }
}

const turnOf = (turn: number) => ({ sessionId: 's1', branchId: 'main', turn, contentKey: turnKey(`Question ${turn}`) });

const caseOn = (turn: number, text: string): CheckCase => ({
  id: `s1/main/${turn}`,
  sessionId: 's1',
  branchId: 'main',
  turn,
  contentKey: turnKey(text),
  verdict: 'good',
  input: text,
  expected: { answer: null, trajectory: [] },
  note: null,
  tags: [],
});

describe("a check's scratch copies in the store worker", function () {
  this.timeout(120_000);
  const w = useWorkerClient('asi-check-worker-');

  it("copy a big branch prefix without blocking this (the host's) thread, and copy the same items", async () => {
    const file = join(w.dir, 'big.db');
    // 600 items of 200 KB before the case's turn: a 120 MB prefix, pages of up to 500 items.
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, createTables: true });
    const filler = 'y'.repeat(200_000);
    for (let t = 1; t <= 3; t++) {
      const items: unknown[] = [user(`Question ${t}`)];
      for (let i = 0; i < 200; i++) items.push({ role: 'assistant', content: `${t}-${i} ${filler}` });
      await s.addItems(items as never);
    }
    await s.addItems([user('The case'), { role: 'assistant', content: 'Its answer.' }] as never);
    s.close();
    const c = caseOn(4, 'The case');
    const client = w.client();
    const workerStore: RunStore = {
      openSession: ({ logger, ...options }) => client.openSession(options, { logger }),
      markWrites: (dbPath, tables) => client.fileCall('markWrites', dbPath, tables),
      writesSince: (dbPath, tables, mark) => client.fileCall('writesSince', dbPath, tables, mark),
    };

    const local = openSessionDatabase(file, { readonly: true });
    const remote = await client.openDatabase(file);
    const workersCopy = () =>
      ScratchFolder.create(w.dir, {
        ...workerStore,
        copyBranchPrefix: (source, target, request, signal, chain) => client.copyBranchPrefix(source, target, request, signal, chain),
        releasePrefixChains: (folder) => client.releasePrefixChains(folder),
      });
    const ways: [string, () => ScratchFolder, Parameters<ScratchFolder['prepare']>[0], string | undefined][] = [
      ['in this thread', () => ScratchFolder.create(w.dir), local, undefined],
      ['pages through this thread', () => ScratchFolder.create(w.dir, workerStore), remote, file],
      ["the worker's copy", workersCopy, remote, file],
    ];
    const gaps: Record<string, number> = {};
    const tookMs: Record<string, number> = {};
    const copied: Record<string, number> = {};
    // The idle floor: this thread's timer doing nothing, in a window before each way and one after, the largest.
    let idleGap = 0;
    const idleWindow = async (ms: number) => {
      const idle = await watchTimer(() => new Promise((resolve) => setTimeout(resolve, ms)));
      idleGap = Math.max(idleGap, idle.worstGap);
    };
    const bound = () => Math.max(Math.min(150, gaps['in this thread']! / 5), 2 * idleGap);
    const measure = async (name: string, create: () => ScratchFolder, reader: (typeof ways)[number][2], source?: string) => {
      const folder = create();
      try {
        const { value, worstGap, took } = await watchTimer(() => folder.prepare(reader, c, 1, undefined, source));
        gaps[name] = Math.min(gaps[name] ?? Infinity, worstGap);
        tookMs[name] = took;
        copied[name] = value.items;
        assert.equal(value.turn, 4, name);
        console.log(`      (${name}: ${value.items} items in ${Math.round(took)} ms, the timer's largest gap ${Math.round(worstGap)} ms)`);
      } finally {
        await folder.dispose();
      }
    };
    try {
      for (const [name, create, reader, source] of ways) {
        await idleWindow(300);
        await measure(name, create, reader, source);
      }
      await idleWindow(tookMs["the worker's copy"]!);
      // A copy that blocks this thread does so every time; a busy machine's stall happens once. So a gap over the
      // bound is measured again, and the smaller of the two is judged (a worker that blocks fails both).
      if (gaps["the worker's copy"]! >= bound()) await measure("the worker's copy", workersCopy, remote, file);
    } finally {
      local.close();
      await remote.close();
    }
    assert.deepEqual(copied, { 'in this thread': 605, 'pages through this thread': 605, "the worker's copy": 605 });
    // Copied here, the thread is blocked a whole page at a time (hundreds of ms); by the worker, only as long as any
    // timer on a busy 2-core machine may be late. The bound is a fifth of the in-thread block, and never over 150 ms,
    // unless this thread's timer is as late doing nothing at all: the idle floor, the largest gap of idle windows
    // taken between the copies. A fresh machine's run (this phase at nice 19 beside a UI phase and an install) once
    // kept the timer 199 ms during the worker's copy, which hands nothing through this thread, and a full run once 158.
    console.log(`      (doing nothing between them, the timer's largest gap ${Math.round(idleGap)} ms)`);
    assert.ok(
      gaps["the worker's copy"]! < bound(),
      `the worker's copy kept the timer waiting ${Math.round(gaps["the worker's copy"]!)} ms (bound ${Math.round(bound())})`,
    );
  });
  it("gives each case of a branch its exact prefix from the worker's chain, reading the branch once", async () => {
    const file = join(w.dir, 'long.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, createTables: true });
    for (let t = 1; t <= 30; t++) await s.addItems([user(`Question ${t}`), { role: 'assistant', content: `Answer ${t}.` }] as never);
    s.close();
    const source = await storedItems(file);
    const client = w.client();
    const store: RunStore = {
      openSession: ({ logger, ...options }) => client.openSession(options, { logger }),
      markWrites: (dbPath, tables) => client.fileCall('markWrites', dbPath, tables),
      writesSince: (dbPath, tables, mark) => client.fileCall('writesSince', dbPath, tables, mark),
      copyBranchPrefix: (from, target, request, signal, chain) => client.copyBranchPrefix(from, target, request, signal, chain),
      releasePrefixChains: (folder) => client.releasePrefixChains(folder),
    };
    const remote = await client.openDatabase(file);
    const folder = ScratchFolder.create(w.dir, store);
    try {
      // As the check starts them: in turn order, eight awaited at once.
      const turns = Array.from({ length: 29 }, (_, i) => i + 2);
      for (let i = 0; i < turns.length; i += 8) {
        const batch = turns.slice(i, i + 8);
        const made = await Promise.all(batch.map((t) => folder.prepare(remote, caseOn(t, `Question ${t}`), t, undefined, file)));
        for (const [j, scratch] of made.entries()) {
          const t = batch[j]!;
          assert.equal(scratch.turn, t);
          assert.equal(scratch.items, 2 * t);
          assert.deepEqual(await storedItems(scratch.dbPath), source.slice(0, 2 * t), `turn ${t}`);
          await folder.discard(scratch);
        }
      }
      assert.ok(existsSync(join(folder.path, 'prefix-1.db')), "the branch's template is in the scratch folder");
      // Read once: each case after the first reads only the items since the one before it (and the turn's first).
      const chain = { file: join(folder.path, 'prefix-1.db'), emptyFile: join(folder.path, 'empty.db') };
      const next = await client.copyBranchPrefix(file, join(folder.path, 'next.db'), turnOf(30), undefined, chain);
      assert.equal(next.copied, 0, 'the template holds turn 30 already');
      const later = await client.copyBranchPrefix(file, join(folder.path, 'early.db'), turnOf(3), undefined, chain);
      assert.deepEqual([later.turn, later.items, later.copied], [3, 6, 6], 'a turn before the template is copied from the start');
      assert.deepEqual(await storedItems(join(folder.path, 'early.db')), source.slice(0, 6));
      await assert.rejects(
        client.copyBranchPrefix(file, join(folder.path, 'changed.db'), { ...turnOf(30), contentKey: turnKey('Another') }, undefined, chain),
        /another user message/,
      );
    } finally {
      await folder.dispose();
      await remote.close();
    }
    assert.equal(existsSync(folder.path), false, 'the scratch folder is gone');
    // The worker is a thread of this process: once the chain is released, nothing here holds the user's file open.
    if (process.platform === 'linux') {
      const open = readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false;
        }
      });
      assert.deepEqual(open, [], "the worker's chain closed its connection to the user's file");
    }
  });
});
