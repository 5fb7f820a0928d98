/**
 * Open as JSON and copying in the real extension host: an item, a turn and a branch open as JSON tabs of our
 * own scheme (refreshed when another process writes), Copy Turn as Markdown and the view's `content/copy` put the
 * store's text on the clipboard, and a stale reference fails with a message instead of an empty tab.
 */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession } from '../../src/store';
import type { AgentSessionsApi } from '../../src/extension/extension';
import type { TreeNode } from '../../src/extension/core/treeNodes';
import { api, askPanel, child, freshScratchPerTest, waitFor, writeTripSession, type Scratch } from './helpers';

const ARGS = '{"city":"Lisbon","unit":"c"}';

/** Writes the trip session, opens its file and returns the tree's `main` branch node of it. */
async function openTrip(a: AgentSessionsApi, path: string): Promise<TreeNode> {
  await writeTripSession(path, { args: ARGS });
  await vscode.commands.executeCommand('agentSessions.openDatabase', path);
  const session = await child(a, await child(a, undefined, 'trip.db'), 'trip');
  return child(a, session, 'main');
}

describe('Open as JSON and copy', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));
  afterEach(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('opens an item, a turn and a branch as JSON tabs, and refreshes them when the file changes', async () => {
    const a = await api();
    const path = `${s.dir}/trip.db`;
    const branch = await openTrip(a, path);
    const turns = await a.tree.children(branch);
    const turn2 = turns.map(([n]) => n).find((n) => n.kind === 'turn' && n.turn === 2);
    assert.ok(turn2 && turn2.kind === 'turn', 'turn 2 in the tree');
    const items = (await a.tree.children(turn2)).map(([n]) => n);
    const call = items.find((n) => n.kind === 'item' && n.sequenceNumber === 4);
    assert.ok(call, 'the function call item (sequence 4) under turn 2');

    const uri = await vscode.commands.executeCommand<string>('agentSessions.openAsJson', call);
    assert.equal(typeof uri, 'string', JSON.stringify(a.failures.map((f) => f.message)));
    let doc = vscode.window.activeTextEditor?.document;
    assert.equal(doc?.uri.toString(), uri);
    assert.equal(doc?.uri.scheme, 'agent-session-json');
    assert.equal(doc?.languageId, 'json');
    assert.deepEqual(JSON.parse(doc!.getText()), { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: ARGS });
    await vscode.commands.executeCommand('agentSessions.openAsJson', turn2);
    doc = vscode.window.activeTextEditor?.document;
    const turnDoc = JSON.parse(doc!.getText()) as {
      session: string;
      branch: string;
      turn: number;
      items: { role?: string; type?: string }[];
    };
    assert.deepEqual([turnDoc.session, turnDoc.branch, turnDoc.turn], ['trip', 'main', 2]);
    assert.deepEqual(
      turnDoc.items.map((i) => i.role ?? i.type),
      ['user', 'function_call', 'function_call_output', 'assistant'],
    );

    await vscode.commands.executeCommand('agentSessions.openAsJson', branch);
    const branchDoc = vscode.window.activeTextEditor!.document;
    assert.equal((JSON.parse(branchDoc.getText()) as { items: unknown[] }).items.length, 6);

    // Another process adds a turn: the open branch tab follows.
    const writer = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path });
    try {
      await writer.addItems([{ role: 'user', content: 'Thanks!' }] as never);
    } finally {
      writer.close();
    }
    await waitFor(() => (JSON.parse(branchDoc.getText()) as { items: unknown[] }).items.length === 7, 8000, 'the branch tab to refresh');
    assert.match(branchDoc.getText(), /"Thanks!"/);
    assert.deepEqual(a.failures, []);
  });

  it('copies a turn as Markdown and an item part from the view, read from the store; a stale item fails with a message', async () => {
    const a = await api();
    const path = `${s.dir}/trip.db`;
    const branch = await openTrip(a, path);
    const turn2 = (await a.tree.children(branch)).map(([n]) => n).find((n) => n.kind === 'turn' && n.turn === 2);

    const md = await vscode.commands.executeCommand<string>('agentSessions.copyTurnAsMarkdown', turn2);
    assert.equal(await vscode.env.clipboard.readText(), md);
    assert.match(md, /Turn 2/);
    assert.match(md, /And the weather\?/);
    assert.match(md, /get_weather/);
    assert.match(md, /```[^\n]*\n[\s\S]*"city": ?"Lisbon"[\s\S]*```/, 'the arguments fenced');
    assert.match(md, /22°C and sunny/);
    assert.match(md, /Sunny, 22 °C\./);
    assert.doesNotMatch(md, /Plan a day in Lisbon/, 'only turn 2');

    const panel = a.panels.open({ dbPath: path, sessionId: 'trip', branchId: 'main' });
    await a.panels.whenReady(panel);
    let r = await askPanel(panel, 'content/copy', { ref: { branchId: 'main', turn: 2, sequenceNumber: 4 }, part: 'arguments' });
    assert.deepEqual(r, { kind: 'response', id: (r as { id: number }).id, ok: true, result: { copied: true } });
    assert.equal(await vscode.env.clipboard.readText(), JSON.stringify(JSON.parse(ARGS), null, 2));
    r = await askPanel(panel, 'content/copy', { ref: { branchId: 'main', turn: 2, sequenceNumber: 5 }, part: 'output' });
    assert.equal(await vscode.env.clipboard.readText(), '22°C and sunny');
    r = await askPanel(panel, 'content/copy', { ref: { branchId: 'main', turn: 1, sequenceNumber: 2 }, part: 'text' });
    assert.equal(await vscode.env.clipboard.readText(), 'Start at Belém.');

    // An item that is not there (a stale view): an error answer, and the clipboard is left alone.
    r = await askPanel(panel, 'content/copy', { ref: { branchId: 'main', turn: 2, sequenceNumber: 99 }, part: 'json' });
    assert.equal(r.kind === 'response' && !r.ok && r.error, 'The item is no longer in the database; refresh the view.');
    assert.equal(await vscode.env.clipboard.readText(), 'Start at Belém.');
    // A part the item does not have.
    r = await askPanel(panel, 'content/copy', { ref: { branchId: 'main', turn: 2, sequenceNumber: 4 }, part: 'output' });
    assert.match(r.kind === 'response' && !r.ok ? r.error : '', /no output to copy/);

    // Open as JSON from the view: the command opens the tab; a missing turn is a failure with its reason.
    r = await askPanel(panel, 'content/openJson', { ref: { branchId: 'main', turn: 2, sequenceNumber: null } });
    assert.deepEqual(r.kind === 'response' && r.ok && r.result, { opened: true });
    assert.equal(vscode.window.activeTextEditor?.document.uri.scheme, 'agent-session-json');
    r = await askPanel(panel, 'content/openJson', { ref: { branchId: 'main', turn: 9, sequenceNumber: null } });
    assert.deepEqual(r.kind === 'response' && r.ok && r.result, { opened: false });
    assert.match(a.failures.at(-1)?.message ?? '', /Turn 9 is not on branch main/);
  });
});
