/** Compare with… and Compare Branches in the extension host: the panel opens, its page asks for rows, bad input is refused. */
import { strict as assert } from 'node:assert';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { BranchNodeRef } from '../../src/extension/core/treeNodes';
import { api, closeAll, scratch, waitFor, type Scratch } from './helpers';

describe('compare view', () => {
  let s: Scratch;
  let path: string;
  let copy: string;
  beforeEach(async () => {
    s = scratch();
    const a = await api();
    await closeAll(a);
    for (const p of a.compare.all()) p.panel.dispose();
    path = s.copy('conformance/ref-multisession.db');
    copy = join(s.dir, 'copy.db');
    copyFileSync(path, copy);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await vscode.commands.executeCommand('agentSessions.openDatabase', copy);
  });
  afterEach(async () => {
    const a = await api();
    for (const p of a.compare.all()) p.panel.dispose();
    await closeAll(a);
    s.cleanup();
  });

  it('Compare with… on a branch node opens the comparison, and its page reads the rows', async () => {
    const a = await api();
    const failuresBefore = a.failures.length;
    const node: BranchNodeRef = { kind: 'branch', dbPath: path, sessionId: 'alice', branchId: 'main' };
    const result = await vscode.commands.executeCommand('agentSessions.compareWith', node, {
      dbPath: path,
      sessionId: 'alice',
      branchId: 'alt',
    });
    assert.deepEqual(a.failures.slice(failuresBefore), []);
    assert.ok(Array.isArray(result));
    const [panel] = a.compare.all();
    assert.ok(panel, 'a compare panel');
    assert.equal(panel.panel.title, 'Compare main ↔ alt');
    // The page itself (the bundle, its CSP, the messenger) asks for the comparison and then for rows.
    await waitFor(() => panel.firstRowsMs !== undefined, 20_000, 'the view to ask for rows');
    const view = await panel.data.view();
    assert.equal(view.sharedTurns, 1);
    assert.deepEqual(
      view.columns.map((c) => [c.branchId, c.turns]),
      [
        ['main', 2],
        ['alt', 2],
      ],
    );
    // alt's conversation: turn 1 ran on main (36 tokens), turn 2 on alt (55).
    assert.deepEqual(
      (await panel.data.summary()).columns.map((c) => c?.usage.totalTokens),
      [95, 91],
    );
    const { rows } = await panel.data.rows(0, 10);
    assert.deepEqual(
      rows.map((r) => [r.turn, r.differs]),
      [[2, true]],
    );
    // The same comparison again shows the open panel instead of a second one.
    await vscode.commands.executeCommand('agentSessions.compareWith', node, { dbPath: path, sessionId: 'alice', branchId: 'alt' });
    assert.equal(a.compare.all().length, 1);
    // Once a column is swapped the panel compares other branches: the original comparison opens anew.
    panel.data.setColumn(1, { dbPath: path, sessionId: 'bob', branchId: 'main' });
    await vscode.commands.executeCommand('agentSessions.compareWith', node, { dbPath: path, sessionId: 'alice', branchId: 'alt' });
    assert.equal(a.compare.all().length, 2);
  });

  it('Compare Branches compares sessions of two databases by content, with labels, and follows writes', async () => {
    const a = await api();
    await vscode.commands.executeCommand('agentSessions.compareBranches', [
      { dbPath: path, sessionId: 'alice', branchId: 'main', label: 'original' },
      { dbPath: copy, sessionId: 'alice', branchId: 'alt', label: 'copy', runMs: 1500 },
    ]);
    const panel = a.compare.all()[0];
    assert.ok(panel);
    await panel.whenReady;
    const view = await panel.data.view();
    assert.equal(view.sharedBy, 'content');
    assert.equal(view.sharedTurns, 1);
    assert.deepEqual(
      view.columns.map((c) => [c.label, c.runMs]),
      [
        ['original', null],
        ['copy', 1500],
      ],
    );
    // A database closed under the comparison: its column says so instead of failing the view.
    await vscode.commands.executeCommand('agentSessions.closeDatabase', { kind: 'database', dbPath: copy });
    const after = await waitFor(
      async () => {
        const v = await panel.data.view();
        return v.columns[1]?.problem ? v : undefined;
      },
      10_000,
      'the closed column to report its problem',
    );
    assert.match(after?.columns[1]?.problem ?? '', /not open/);
  });

  it('prices a retry’s column at the model that ran it, others at the session’s pricing model', async () => {
    const a = await api();
    await a.pricing.setModel({ dbPath: path, sessionId: 'alice' }, 'gpt-4.1');
    await vscode.commands.executeCommand('agentSessions.compareBranches', [
      { dbPath: path, sessionId: 'alice', branchId: 'main' },
      { dbPath: path, sessionId: 'alice', branchId: 'alt', label: 'gpt-4o-mini', model: 'gpt-4o-mini' },
      { dbPath: path, sessionId: 'alice', branchId: 'alt', label: 'unknown', model: 'no-such-model' },
    ]);
    const panel = a.compare.all()[0];
    assert.ok(panel);
    const { columns } = await panel.data.summary();
    assert.deepEqual(
      columns.map((c) => c?.pricingModel),
      ['gpt-4.1', 'gpt-4o-mini', 'no-such-model'],
    );
    assert.ok(columns[0]?.cost && columns[1]?.cost, 'both known models have a cost');
    assert.notEqual(columns[0]?.cost, columns[1]?.cost);
    assert.equal(columns[2]?.cost, null);
    await a.pricing.setModel({ dbPath: path, sessionId: 'alice' }, null);
  });

  it('refuses bad arguments with a clear message', async () => {
    const a = await api();
    const before = a.failures.length;
    await vscode.commands.executeCommand('agentSessions.compareBranches', [{ dbPath: path, sessionId: 'alice', branchId: 'main' }]);
    await vscode.commands.executeCommand('agentSessions.compareBranches', 'nonsense');
    await vscode.commands.executeCommand('agentSessions.compareWith', { kind: 'item' });
    const messages = a.failures.slice(before).map((f) => f.message);
    assert.equal(messages.length, 3, messages.join('\n'));
    assert.match(messages[0]!, /2 to 5 branches, got 1/);
    assert.match(messages[1]!, /needs a list of branches/);
    assert.match(messages[2]!, /Compare with… needs a branch/);
    assert.equal(a.compare.all().length, 0);
  });
});
