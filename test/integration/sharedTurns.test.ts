/**
 * The turn list's data for a branch of nested forks, as the real panel sends it to its page: shared turns name the
 * branch that ran them (the grandparent for the oldest) and carry that branch's usage and original time.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HostMessage } from '../../src/shared/protocol/conversation';
import type { TurnPageView } from '../../src/shared/protocol/conversationViews';
import { AdvancedSQLiteSession, openDatabase } from '../../src/store';
import { api, child, childRows, freshScratchPerTest, waitFor, type Scratch } from './helpers';

const usage = (total: number) => ({
  state: {
    usage: { requests: 1, inputTokens: total - 1, outputTokens: 1, totalTokens: total, inputTokensDetails: [], outputTokensDetails: [] },
  },
});

/** main 1–4 (usage 10 × turn), x from main @ 3 (own 3–4, 100 × turn), y from x @ 4 (own 4, 5000); old rows backdated. */
async function writeNestedForks(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'nested', dbPath: path, createTables: true });
  const backdate = (time: string): void => {
    const db = openDatabase(path);
    try {
      // '2021-01-01', not '2021': the TIMESTAMP column's numeric affinity would turn '2021' into a number.
      db.prepare("UPDATE agent_messages SET created_at = ? WHERE created_at > '2021-01-01'").run(time);
      db.prepare("UPDATE message_structure SET created_at = ? WHERE created_at > '2021-01-01'").run(time);
    } finally {
      db.close();
    }
  };
  try {
    for (let t = 1; t <= 4; t++) {
      await s.addItems([{ role: 'user', content: `main ${t}` }]);
      await s.storeRunUsage(usage(10 * t));
    }
    backdate('2020-01-01 09:00:00');
    await s.createBranchFromTurn(3, 'x');
    for (let t = 3; t <= 4; t++) {
      await s.addItems([{ role: 'user', content: `x ${t}` }]);
      await s.storeRunUsage(usage(100 * t));
    }
    backdate('2020-02-02 09:00:00');
    await s.createBranchFromTurn(4, 'y');
    await s.addItems([{ role: 'user', content: 'y 4' }]);
    await s.storeRunUsage(usage(5000));
  } finally {
    s.close();
  }
}

describe('shared turns in the conversation view', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it("sends a nested fork's turns with the branch that ran each shared turn, its usage and its original time", async () => {
    const a = await api();
    const path = join(s.dir, 'nested.db');
    await writeNestedForks(path);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const failuresBefore = a.failures.length;
    const panel = a.panels.open({ dbPath: path, sessionId: 'nested', branchId: 'y' });
    const pages: TurnPageView[] = [];
    // Watch what the panel answers its page (the page still receives everything).
    const webview = panel.panel.webview;
    const post = webview.postMessage.bind(webview);
    webview.postMessage = (m: HostMessage) => {
      if (m.kind === 'response' && m.ok && typeof m.result === 'object' && m.result !== null && 'turns' in m.result) {
        pages.push(m.result as TurnPageView);
      }
      return post(m);
    };
    try {
      const page = await waitFor(() => pages.find((p) => p.branchId === 'y'), 20_000, "the page's turns of y");
      assert.ok(page);
      assert.deepEqual(
        page.turns.map((t) => [t.turn, t.sharedFrom ?? null, t.totalTokens, t.createdAt?.slice(0, 10)]),
        [
          [1, 'main', 10, '2020-01-01'],
          [2, 'main', 20, '2020-01-01'],
          [3, 'x', 300, '2020-02-02'],
          [4, null, 5000, page.turns[3]?.createdAt?.slice(0, 10)],
        ],
      );
      assert.ok((page.turns[3]?.createdAt ?? '') > '2021-01-01', "y's own turn has its own time");
      assert.deepEqual(a.failures.slice(failuresBefore), []);
    } finally {
      panel.panel.dispose();
    }
  });

  it("shows the same in the sessions tree: a shared turn's usage and where it ran", async () => {
    const a = await api();
    const path = join(s.dir, 'nested.db');
    await writeNestedForks(path);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const y = await child(a, await child(a, await child(a, undefined, 'nested.db'), 'nested'), 'y');
    const rows = await childRows(a, y);
    assert.deepEqual(
      rows.map((r) => [r.label, r.description]),
      [
        ['Turn 1', 'main 1 · 10 tokens · shared with main'],
        ['Turn 2', 'main 2 · 20 tokens · shared with main'],
        ['Turn 3', 'x 3 · 300 tokens · shared with x'],
        ['Turn 4', 'y 4 · 5,000 tokens'],
      ],
    );
  });
});
