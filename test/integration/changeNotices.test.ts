/**
 * What the conversation view is told after a change, observed at the panel's real webview: one numbered notice
 * per burst, naming what changed, and nothing for changes that do not concern the panel's session.
 */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { TurnNode } from '../../src/extension/core/treeNodes';
import type { HostMessage } from '../../src/shared/protocol/conversation';
import { api, child, freshScratchPerTest, waitFor, type Scratch } from './helpers';

describe('change notices to the conversation view', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it('sends one notice for a branch creation, one for a switch, and none for another session', async () => {
    const a = await api();
    const path = s.copy('conformance/ref-multisession.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const panel = a.panels.open({ dbPath: path, sessionId: 'alice', branchId: 'main' });
    try {
      await a.panels.whenReady(panel);
      // Watch what the panel posts to its page (the page still receives everything).
      const webview = panel.panel.webview;
      const post = webview.postMessage.bind(webview);
      const notices: Extract<HostMessage, { kind: 'session/didChange' }>[] = [];
      webview.postMessage = (m: HostMessage) => {
        if (m.kind === 'session/didChange') notices.push(m);
        return post(m);
      };
      const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 300));
      await settle();
      notices.length = 0;

      const db = await child(a, undefined, 'ref-multisession.db');
      const turn = (await child(a, await child(a, await child(a, db, 'alice'), 'main'), 'Turn 2')) as TurnNode;
      assert.equal(await vscode.commands.executeCommand('agentSessions.branchFromTurn', turn, 'noticed'), 'noticed');
      await waitFor(() => notices.length > 0, 3000, 'a notice after the branch creation');
      await settle();
      assert.equal(notices.length, 1, JSON.stringify(notices));
      const created = notices[0]!;
      assert.deepEqual(created.what, ['branches', 'current-branch', 'turns', 'usage']);

      await vscode.commands.executeCommand('agentSessions.switchBranch', {
        kind: 'branch',
        dbPath: path,
        sessionId: 'alice',
        branchId: 'main',
      });
      await waitFor(() => notices.length > 1, 3000, 'a notice after the switch');
      await settle();
      assert.deepEqual(
        notices.slice(1).map((n) => [n.seq, n.what]),
        [[created.seq + 1, ['current-branch']]],
      );

      await vscode.commands.executeCommand('agentSessions.switchBranch', {
        kind: 'branch',
        dbPath: path,
        sessionId: 'bob',
        branchId: 'main',
      });
      await settle();
      assert.equal(notices.length, 2, 'bob is not this panel’s session');
    } finally {
      panel.panel.dispose();
    }
  });
});
