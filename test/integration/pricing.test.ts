/**
 * Costs in the real extension host: Set Pricing Model… changes what a session's tree tooltip and its Tokens table say
 * it cost, an unknown model shows tokens only with the hint, and agentSessions.pricing.prices adds a model (a bad
 * entry is ignored, not a failure).
 */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { ConversationPanels } from '../../src/extension/conversation/conversationPanel';
import type { TreeNode } from '../../src/extension/core/treeNodes';
import type { HostMessage } from '../../src/shared/protocol/conversation';
import type { TablesView } from '../../src/shared/protocol/conversationViews';
import { AdvancedSQLiteSession } from '../../src/store';
import { api, askPanel, child, freshScratchPerTest, waitFor, type Scratch } from './helpers';

/** One turn of 1,000,000 input tokens (400,000 cached) and 100,000 output tokens (50,000 of them reasoning). */
async function pricedSession(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'priced', dbPath: path, createTables: true });
  try {
    await s.addItems([{ role: 'user', content: 'How much?' }]);
    await s.storeRunUsage({
      state: {
        usage: {
          requests: 2,
          inputTokens: 1_000_000,
          outputTokens: 100_000,
          totalTokens: 1_100_000,
          inputTokensDetails: [{ cached_tokens: 400_000 }],
          outputTokensDetails: [{ reasoning_tokens: 50_000 }],
        },
      },
    } as never);
  } finally {
    s.close();
  }
}

/** The session node's tooltip as VS Code shows it on hover (the cost is added by resolveTreeItem). */
async function tooltip(node: TreeNode): Promise<string> {
  const a = await api();
  await a.tree.getChildren(a.tree.getParent(node));
  const item = await a.tree.getTreeItem(node);
  const resolved = await a.tree.resolveTreeItem(item, node);
  const t = resolved.tooltip;
  // appendText escapes the text as Markdown (spaces as &nbsp;, punctuation with backslashes): read it back as text.
  const md = typeof t === 'string' ? t : (t?.value ?? '');
  return md.replace(/&nbsp;/g, ' ').replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1');
}

/** Sends `tables/get` to the panel as its page would, and returns the answer it posts back. */
async function tablesOf(panel: ReturnType<ConversationPanels['open']>, branchId: string | null): Promise<TablesView> {
  const usage = { sort: 'turn', descending: false, offset: 0, limit: 200 };
  const answer = await askPanel(panel, 'tables/get', { branchId, usage });
  if (answer.kind !== 'response' || !answer.ok) throw new Error(`tables/get failed: ${JSON.stringify(answer)}`);
  return answer.result as TablesView;
}

const near = (actual: number | null | undefined, expected: number): void =>
  assert.ok(typeof actual === 'number' && Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);

describe('pricing', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));
  afterEach(async () => {
    await vscode.workspace.getConfiguration('agentSessions').update('pricing.prices', undefined, vscode.ConfigurationTarget.Global);
  });

  it('Set Pricing Model… changes the cost in the tree tooltip and the Tokens table; an unknown model shows tokens only', async () => {
    const a = await api();
    const path = `${s.dir}/priced.db`;
    await pricedSession(path);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const session = await child(a, await child(a, undefined, 'priced.db'), 'priced');
    const branch = await child(a, session, 'main');
    const ref = { dbPath: path, sessionId: 'priced' };

    // gpt-4.1: 600,000 uncached × $2 + 400,000 cached × $0.50 + 100,000 output (reasoning included) × $8 per 1M.
    assert.equal(await vscode.commands.executeCommand('agentSessions.setPricingModel', session, 'gpt-4.1'), 'gpt-4.1');
    assert.match(await tooltip(session), /Cost \(all branches\): \$2\.20 at gpt-4\.1 prices of \d{4}-\d{2}-\d{2}/);
    assert.match(await tooltip(branch), /Cost \(runs on this branch\): \$2\.20 at gpt-4\.1 prices/);

    const panel = a.panels.open({ ...ref, branchId: 'main' });
    try {
      await a.panels.whenReady(panel);
      let t = await tablesOf(panel, 'main');
      assert.deepEqual(t.pricing && { model: t.pricing.model, known: t.pricing.known }, { model: 'gpt-4.1', known: true });
      near(t.usage.rows[0]?.cost, 2.2);
      near(t.usage.totals.cost, 2.2);

      // A dated snapshot is priced as its base model (from a branch node too: the model is the session's).
      const notices: HostMessage[] = [];
      const webview = panel.panel.webview;
      const post = webview.postMessage.bind(webview);
      webview.postMessage = (m: HostMessage) => {
        if (m.kind === 'session/didChange') notices.push(m);
        return post(m);
      };
      await vscode.commands.executeCommand('agentSessions.setPricingModel', branch, 'gpt-4o-mini-2024-07-18');
      await waitFor(() => notices.length > 0, 3000, 'a pricing notice to the open view');
      webview.postMessage = post;
      assert.deepEqual((notices[0] as { what: string[] }).what, ['pricing']);
      t = await tablesOf(panel, null);
      // 600,000 × $0.15 + 400,000 × $0.075 + 100,000 × $0.60 = $0.18.
      near(t.usage.totals.cost, 0.18);
      assert.match(await tooltip(session), /\$0\.180 at gpt-4o-mini-2024-07-18 prices/);

      await vscode.commands.executeCommand('agentSessions.setPricingModel', session, 'my-local-model');
      t = await tablesOf(panel, 'main');
      assert.deepEqual(t.pricing && { model: t.pricing.model, known: t.pricing.known }, { model: 'my-local-model', known: false });
      assert.equal(t.usage.rows[0]?.cost, null);
      assert.equal(t.usage.rows[0]?.totalTokens, 1_100_000, 'the tokens are still shown');
      assert.match(await tooltip(session), /No price for model my-local-model: run Set Pricing Model… to show costs\./);

      // The setting adds the model (its bad neighbour is ignored with a warning in the log, not an error).
      await vscode.workspace
        .getConfiguration('agentSessions')
        .update(
          'pricing.prices',
          { 'my-local-model': { input: 1, output: 2 }, broken: { input: 'free' } },
          vscode.ConfigurationTarget.Global,
        );
      await waitFor(() => a.pricing.pricingFor(ref).price !== null, 3000, 'the setting to apply');
      t = await tablesOf(panel, 'main');
      // No cached rate: 1,000,000 input × $1 + 100,000 output × $2.
      near(t.usage.totals.cost, 1.2);
      assert.match(await tooltip(session), /Cost \(all branches\): \$1\.20 at my-local-model prices/);
      assert.equal(a.pricing.pricingFor({ ...ref, sessionId: 'other' }).model, 'gpt-4.1-mini', 'other sessions keep the agent model');
    } finally {
      panel.panel.dispose();
      await a.pricing.setModel(ref, null);
    }
    assert.deepEqual(
      a.failures.filter((f) => f.command === 'agentSessions.setPricingModel'),
      [],
    );
  });
});
