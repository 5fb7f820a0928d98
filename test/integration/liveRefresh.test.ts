/**
 * Live refresh: another process appends turns (as a Python agent would) while the database is open; the tree
 * shows them within a second, and reading never blocks that writer.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession } from '../../src/store';
import { api, child, childRows, extensionPath, freshScratchPerTest, waitFor, type Scratch } from './helpers';

/** Runs a Node child that writes `turns` turns through the bundled store, printing the time after each commit. */
function writer(path: string, turns: number, pauseMs: number): { times: number[]; done: Promise<number> } {
  const store = join(extensionPath(), 'dist', 'store.js');
  const script = `
    const { AdvancedSQLiteSession } = require(${JSON.stringify(store)});
    (async () => {
      const s = new AdvancedSQLiteSession({ sessionId: 'live', dbPath: ${JSON.stringify(path)} });
      for (let t = 0; t < ${turns}; t++) {
        await s.addItems([{ role: 'user', content: 'external question ' + t }, { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'answer ' + t }] }]);
        await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 } } });
        console.log(Date.now());
        await new Promise((r) => setTimeout(r, ${pauseMs}));
      }
      s.close();
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const times: number[] = [];
  child.stdout.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) times.push(Number(line));
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<number>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(code) : reject(new Error(`writer failed: ${err}`)))),
  );
  return { times, done };
}

describe('live refresh', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it('shows turns another process appends, within a second of each commit', async () => {
    const a = await api();
    const path = join(s.dir, 'live.db');
    const seed = new AdvancedSQLiteSession({ sessionId: 'live', dbPath: path, createTables: true });
    await seed.addItems([{ role: 'user', content: 'first' }]);
    seed.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const branch = await child(a, await child(a, await child(a, undefined, 'live.db'), 'live'), 'main');
    assert.equal((await childRows(a, branch)).length, 1);

    const latencies: number[] = [];
    let seen = 1;
    const sub = a.tree.onDidChangeTreeData(async () => {
      const rows = await childRows(a, branch);
      const now = Date.now();
      while (seen < rows.length && w.times.length >= seen) {
        latencies.push(now - (w.times[seen - 1] as number));
        seen++;
      }
    });
    const w = writer(path, 10, 150);
    try {
      await w.done;
      await waitFor(async () => (await childRows(a, branch)).length === 11, 3000, 'all 10 external turns in the tree');
    } finally {
      sub.dispose();
    }
    const rows = await childRows(a, branch);
    assert.deepEqual(
      rows.map((r) => r.label),
      Array.from({ length: 11 }, (_, i) => `Turn ${i + 1}`),
    );
    assert.match(rows[10]!.description, /external question 9 · 15 tokens/);
    assert.ok(latencies.length >= 5, `observed ${latencies.length} updates`);
    const max = Math.max(...latencies);
    console.log(
      `      external write → tree update: median ${latencies.sort((x, y) => x - y)[latencies.length >> 1]} ms, max ${max} ms over ${latencies.length} commits`,
    );
    assert.ok(max < 1000, `every update within 1 s (max ${max} ms)`);
  });
});
