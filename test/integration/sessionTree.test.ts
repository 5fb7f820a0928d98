/** Opening databases and browsing them in the sidebar tree, inside the real extension host. */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../src/store';
import { contentKey } from '../../src/store/reviews/contentKey';
import { writeBuiltinToolSession } from '../support/builtinToolItems';
import { nodeId, type TreeNode } from '../../src/extension/core/treeNodes';
import type { AgentSessionsApi } from '../../src/extension/extension';
import { api, child, childRows, freshScratchPerTest, waitFor, type Scratch } from './helpers';

/**
 * Records what VS Code asks the tree for (in the real host's tree view): the nodes whose children it reads ('root' for
 * the databases) and the items it draws, by node id, with their label and description. `stop()` puts the provider back.
 */
function watchTreeRequests(a: AgentSessionsApi) {
  const asked: string[] = [];
  const drawn = new Map<string, string>();
  const { getChildren, getTreeItem } = a.tree;
  a.tree.getChildren = (n?: TreeNode) => {
    asked.push(n ? nodeId(n) : 'root');
    return getChildren.call(a.tree, n);
  };
  a.tree.getTreeItem = async (n: TreeNode) => {
    const item = await getTreeItem.call(a.tree, n);
    const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
    drawn.set(nodeId(n), `${label} | ${typeof item.description === 'string' ? item.description : ''}`);
    return item;
  };
  return {
    asked,
    drawn,
    stop() {
      a.tree.getChildren = getChildren;
      a.tree.getTreeItem = getTreeItem;
    },
  };
}

describe('session tree', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it('opens a Python-written database and shows database → session → branch → turn → item', async () => {
    const a = await api();
    const path = s.copy('conformance/ref-multisession.db');
    const opened = await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    assert.equal(opened, path);
    const db = await child(a, undefined, 'ref-multisession.db');
    const sessions = await childRows(a, db);
    assert.deepEqual(sessions.map((r) => r.label).sort(), ['alice', 'bob']);
    const alice = await child(a, db, 'alice');
    const branches = await childRows(a, alice);
    assert.deepEqual(
      branches.map((r) => r.label),
      ['main', 'alt'],
    );
    assert.match(branches[0]!.description, /current/);
    assert.match(branches[1]!.description, /from main @ turn 2/);
    const turns = await childRows(a, await child(a, alice, 'alt'));
    assert.deepEqual(
      turns.map((r) => r.label),
      ['Turn 1', 'Turn 2'],
    );
    assert.match(turns[1]!.description, /Something sci-fi but short\?/);
    assert.match(turns[0]!.contextValue, /\bcanBranch\b/);
    const items = await childRows(a, turns[1]!.node);
    assert.deepEqual(
      items.map((r) => r.label),
      ['User', 'Assistant'],
    );
    assert.match(items[1]!.description, /Flowers for Algernon/);
  });

  it('shows tool calls with their tool names, and outputs by kind', async () => {
    const a = await api();
    const path = `${s.dir}/tools.db`;
    const session = new AdvancedSQLiteSession({ sessionId: 'tools', dbPath: path, createTables: true });
    await session.addItems([
      { role: 'user', content: 'What is 17 * 23?' },
      { type: 'function_call', name: 'calculator', callId: 'c1', arguments: '{"expression":"17*23"}', status: 'completed' },
      { type: 'function_call_result', name: 'calculator', callId: 'c1', status: 'completed', output: { type: 'text', text: '391' } },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '17 * 23 = 391' }] },
    ] as never);
    session.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const turn = await child(a, await child(a, await child(a, await child(a, undefined, 'tools.db'), 'tools'), 'main'), 'Turn 1');
    const items = await childRows(a, turn);
    assert.deepEqual(
      items.map((r) => r.label),
      ['User', 'calculator', 'calculator result', 'Assistant'],
    );
    assert.equal(items[1]!.description, '{"expression":"17*23"}');
    assert.equal(items[2]!.description, '391');
  });

  it('names built-in tool items by their tool, not by their stored type, with their key field as the description', async () => {
    const a = await api();
    const path = `${s.dir}/builtin.db`;
    await writeBuiltinToolSession(path);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const branch = await child(a, await child(a, await child(a, undefined, 'builtin.db'), 'tools'), 'main');
    const rows: string[] = [];
    for (const turn of await childRows(a, branch)) {
      assert.equal(turn.description.includes('[{'), false, `a structured user message shows as text: ${turn.description}`);
      for (const r of await childRows(a, turn.node)) rows.push(`${r.label} | ${r.description}`);
    }
    for (const r of rows) assert.doesNotMatch(r.split(' | ')[0]!, /_call|_output|_result|function_call|mcp_/, r);
    assert.ok(rows.includes('User | Click the search box and take a screenshot.'), rows.join('\n'));
    assert.ok(
      rows.some((r) => /^web search \| .*weather in Paris/.test(r)),
      'web search with its query',
    );
    assert.ok(
      rows.some((r) => /^shell \| .*ls -la/.test(r)),
      'shell with its command',
    );
    assert.ok(
      rows.some((r) => r.startsWith('get_weather result | ')),
      'a Python-shaped output named by its call',
    );
  });

  it('pages a long branch: 200 turns at a time, "Show more turns…" up to its latest turns, which are one click away', async () => {
    const a = await api();
    const path = `${s.dir}/long.db`;
    const session = new AdvancedSQLiteSession({ sessionId: 'long', dbPath: path, createTables: true, synchronous: 'NORMAL' });
    for (let t = 1; t <= 650; t++) await session.addItems([{ role: 'user', content: `question ${t}` }]);
    session.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const branch = await child(a, await child(a, await child(a, undefined, 'long.db'), 'long'), 'main');
    const first = await childRows(a, branch);
    assert.equal(first.length, 202);
    assert.deepEqual(
      first.slice(199).map((r) => r.label),
      ['Turn 200', 'Show more turns…', 'Latest turns (from turn 451)'],
    );
    const latest = await childRows(a, first[201]!.node);
    assert.deepEqual([latest.length, latest[0]!.label, latest[199]!.label], [200, 'Turn 451', 'Turn 650']);
    // Paging from the start stops where the latest turns begin: each turn is listed once.
    const second = await childRows(a, first[200]!.node);
    assert.deepEqual([second[0]!.label, second[199]!.label, second[200]!.label], ['Turn 201', 'Turn 400', 'Show more turns…']);
    const third = await childRows(a, second[200]!.node);
    assert.deepEqual([third.length, third[0]!.label, third[49]!.label], [50, 'Turn 401', 'Turn 450']);
  });

  it('shows what came before the first user message as "Before the first turn", first in the branch', async () => {
    const a = await api();
    const path = `${s.dir}/instructions.db`;
    const session = new AdvancedSQLiteSession({ sessionId: 'support', dbPath: path, createTables: true });
    await session.addItems([
      { role: 'system', content: 'You are the support agent. Refund only with an order number.' },
      { role: 'developer', content: 'Today is 2026-12-02.' },
    ] as never);
    await session.addItems([{ role: 'user', content: 'Where is my refund?' }]);
    session.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const db = await childRows(a, undefined);
    assert.match(db.find((r) => r.label === 'instructions.db')?.description ?? '', /^1 session · \d+(\.\d)? KB$/);
    const turns = await childRows(a, await child(a, await child(a, await child(a, undefined, 'instructions.db'), 'support'), 'main'));
    assert.deepEqual(
      turns.map((r) => r.label),
      ['Before the first turn', 'Turn 1'],
    );
    assert.match(turns[0]!.description, /^You are the support agent\. Refund only with an order number\. · 2 items$/);
    assert.doesNotMatch(turns[0]!.contextValue, /canBranch/);
    const items = await childRows(a, turns[0]!.node);
    assert.equal(items.length, 2);
  });

  it('redraws only the database another connection wrote to, so a click elsewhere never meets a cleared tree', async () => {
    // A refresh of the whole tree makes VS Code drop every node it holds until it has read the roots again; a click
    // on a database in that time asks for children of a node it no longer knows and shows it expanded and empty. So
    // a write redraws its database's node (the same object VS Code was given) and what is expanded under it, only.
    const a = await api();
    const path = s.copy('conformance/ref-multisession.db');
    const other = s.copy('conformance/ref-basic.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await vscode.commands.executeCommand('agentSessions.openDatabase', other);
    const db = await child(a, undefined, 'ref-multisession.db');
    const alice = await child(a, db, 'alice');
    const { asked, drawn, stop } = watchTreeRequests(a);
    const restore: (() => void)[] = [];
    try {
      await a.treeView.reveal(alice, { expand: true });
      // Opening and revealing read the tree (each change is debounced by VS Code): wait until it has settled.
      let seen = -1;
      await waitFor(
        async () => {
          const settled = seen === asked.length;
          seen = asked.length;
          if (!settled) await new Promise((r) => setTimeout(r, 500));
          return settled;
        },
        15_000,
        'the tree to settle',
      );
      assert.ok(asked.includes(nodeId(alice)), `VS Code read alice's branches: ${asked.join(' ')}`);
      asked.length = 0;
      drawn.clear();
      // The other database's session count is not read again either (its item is not asked for).
      const otherDb = a.registry.get(other)?.db as { countSessionRows(): Promise<number> };
      const countRows = otherDb.countSessionRows;
      let otherCounts = 0;
      otherDb.countSessionRows = () => {
        otherCounts++;
        return countRows.call(otherDb);
      };
      restore.push(() => (otherDb.countSessionRows = countRows));
      // A turn for alice and a new session: the database's count and alice's branches change.
      for (const sessionId of ['alice', 'carol']) {
        const writer = new AdvancedSQLiteSession({ sessionId, dbPath: path });
        await writer.addItems([{ role: 'user', content: 'a turn from another connection' }]);
        writer.close();
      }
      await waitFor(() => asked.includes(nodeId(alice)), 10_000, `VS Code to read alice again (asked: ${asked.join(' ')})`);
      assert.deepEqual(
        asked.filter((id) => id === 'root' || id.includes(JSON.stringify(other).slice(1, -1))),
        [],
        'neither the roots nor the other database were read again',
      );
      assert.ok(asked.includes(nodeId(db)), `the written database's sessions were read again: ${asked.join(' ')}`);
      assert.match(drawn.get(nodeId(db)) ?? '(not asked)', /\| 3 sessions/, 'the database shows its new count');
      assert.equal(otherCounts, 0, "the other database's sessions were counted again");
    } finally {
      stop();
      for (const undo of restore) undo();
    }
    assert.deepEqual((await childRows(a, db)).map((r) => r.label).sort(), ['alice', 'bob', 'carol']);
    const turns = await childRows(a, await child(a, alice, 'main'));
    assert.match(turns[turns.length - 1]!.description, /a turn from another connection/);
  });

  it("redraws a session's branches when a review marks a turn or the current branch moves, not the session list", async () => {
    const a = await api();
    const path = s.copy('conformance/ref-multisession.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const db = await child(a, undefined, 'ref-multisession.db');
    const alice = await child(a, db, 'alice');
    const main = await child(a, alice, 'main');
    const { asked, drawn: shown, stop } = watchTreeRequests(a);
    const [first] = (() => {
      const raw = openSessionDatabase(path, { readonly: true });
      try {
        return raw.getTurnItems('alice', 'main', 1);
      } finally {
        raw.close();
      }
    })();
    assert.ok(first && !first.corrupt);
    const turn1 = nodeId({ kind: 'turn', dbPath: path, sessionId: 'alice', branchId: 'main', turn: 1, branchTurnNumber: null });
    const undo: (() => void)[] = [];
    let lists = 0;
    const ref = { sessionId: 'alice', branchId: 'main', turn: 1, turnKey: contentKey(first.item) };
    try {
      await a.treeView.reveal(main, { expand: true });
      await waitFor(() => shown.has(turn1), 10_000, 'turn 1 drawn');
      await new Promise((r) => setTimeout(r, 600)); // past VS Code's 200 ms debounce of the open's changes
      asked.length = 0;
      // The database's session list is not read again, by VS Code or by the provider for an item VS Code asks for.
      const file = a.registry.get(path)?.db as { listSessions(): Promise<unknown> };
      const listSessions = file.listSessions;
      file.listSessions = () => {
        lists++;
        return listSessions.call(file);
      };
      undo.push(() => (file.listSessions = listSessions));
      await a.reviews.write({ dbPath: path, sessionId: 'alice' }, (store) => store.call('setTurnReview', ref, { verdict: 'bad' }));
      await waitFor(() => / ✗ \|/.test(shown.get(turn1) ?? ''), 10_000, `turn 1 drawn with its mark (${shown.get(turn1)})`);
      // Switch Branch: the mark of the current branch moves to alt.
      const alt = nodeId({ kind: 'branch', dbPath: path, sessionId: 'alice', branchId: 'alt' });
      await vscode.commands.executeCommand('agentSessions.switchBranch', {
        kind: 'branch',
        dbPath: path,
        sessionId: 'alice',
        branchId: 'alt',
      });
      await waitFor(() => /\| .*current/.test(shown.get(alt) ?? ''), 10_000, `alt drawn as the current branch (${shown.get(alt)})`);
      assert.doesNotMatch(shown.get(nodeId(main)) ?? '', /\| .*current/);
      assert.deepEqual(
        asked.filter((id) => id === 'root' || id === nodeId(db)),
        [],
        `neither the databases nor alice's database's sessions were read again: ${asked.join(' ')}`,
      );
      assert.equal(lists, 0, "the database's sessions were listed again");
    } finally {
      stop();
      for (const f of undo) f();
      await a.reviews.write({ dbPath: path, sessionId: 'alice' }, (store) => store.call('setTurnReview', ref, { verdict: null }));
    }
  });

  it('remembers opened databases and reopens them after a restore', async () => {
    const a = await api();
    const path = s.copy('conformance/ref-basic.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const saved = a.registry.list().map((e) => e.path);
    assert.ok(saved.includes(path));
    await a.registry.close(path);
    assert.ok(!a.registry.get(path));
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await a.registry.restore();
    assert.ok(a.registry.get(path)?.db, 'reopened');
  });

  it('marks unreadable rows instead of hiding them', async () => {
    const a = await api();
    const path = `${s.dir}/broken.db`;
    const session = new AdvancedSQLiteSession({ sessionId: 'x', dbPath: path, createTables: true });
    await session.addItems([
      { role: 'user', content: 'hello' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi' }] } as never,
    ]);
    session.close();
    const { openDatabase } = await import('../../src/store');
    const raw = openDatabase(path);
    raw.prepare("UPDATE agent_messages SET message_data = '{broken json' WHERE id = 2").run();
    raw.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const turn = await child(a, await child(a, await child(a, await child(a, undefined, 'broken.db'), 'x'), 'main'), 'Turn 1');
    const items = await childRows(a, turn);
    assert.deepEqual(
      items.map((r) => r.label),
      ['User', 'unreadable'],
    );
    assert.match(items[1]!.description, /\{broken json/);
  });
});
