/**
 * *Check Agent Against Reviews…* in the real workbench (docs/check.md, "In VS Code"): run from the palette through its
 * questions (the query left empty, the one agent command, a second grader picked, the tool mode accepted), the cases
 * streaming into the Check Results view with PASS/FAIL and the failing grader's reason under its case, the status-bar
 * summary, Show Failures Only, the check saved as an experiment and compared with it, and a case opened as a
 * comparison (run once more onto a kept branch, after the question). The agent is a real Python process
 * (test/fixtures/agent-commands/python_turn.py) answering "Answer from default: <message>"; the reviews are kept
 * beside the session file. Screenshot for the docs. Then the same check through the built-in agent: the configured
 * model through the configured endpoint (the loopback server, answering as the Python agent does).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { contentKey } from '../../src/store/reviews/contentKey';
import { ReviewStore } from '../../src/store/reviews/reviewStore';
import { FLOW_THEMES, ROOT, docsScreenshot, useWorkbench } from './suite';
import { compareViewFrame } from './workbench';

const SCRIPT = join(ROOT, 'test', 'fixtures', 'agent-commands', 'python_turn.py');
const hasPython = spawnSync('python3', ['--version']).status === 0;
const SESSION = 'support';

/** Three reviewed turns: turn 1 answered as the agent answers now, turn 2 not, turn 3 corrected to what it says now. */
async function prepareFile(db: string): Promise<void> {
  const w = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: db, createTables: true });
  const turns: [string, string][] = [
    ['Where is my order?', 'Answer from default: Where is my order?'],
    ['Can I return the shoes?', 'Returns are accepted within 30 days.'],
    ['Cancel my subscription', 'I cannot do that.'],
  ];
  for (const [q, a] of turns)
    await w.addItems([
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ] as never);
  const wrong = (await w.getTurnStoredItems(3)).find((i) => (i as { role?: string }).role === 'assistant');
  w.close();
  const r = ReviewStore.open(`${db}.reviews.db`);
  try {
    const ref = (turn: number) => ({
      sessionId: SESSION,
      branchId: 'main',
      turn,
      turnKey: contentKey({ role: 'user', content: turns[turn - 1]![0] }),
    });
    r.setTurnReview(ref(1), { verdict: 'good' });
    r.setTurnReview(ref(2), { verdict: 'good', tags: ['returns'] });
    r.setTurnReview(ref(3), { verdict: 'bad' });
    r.setCorrection({ ...ref(3), itemKey: contentKey(wrong), text: 'Answer from default: Cancel my subscription' });
  } finally {
    r.close();
  }
}

for (const theme of FLOW_THEMES) {
  describe(`checking the agent against reviews (${theme} theme)`, function () {
    /** The built-in agent's model: it answers as the Python agent does. */
    let model: LoopbackOpenAI;
    before(async function () {
      if (!hasPython) {
        console.log('    (skipped: python3 is not installed, so the Python agent command cannot run)');
        this.skip();
      }
      model = await startLoopbackOpenAI({ script: (req) => ({ kind: 'text', text: `Answer from default: ${lastUserText(req.body)}` }) });
    });
    after(async () => {
      await model?.close();
    });

    const suite = useWorkbench({
      name: 'check',
      theme,
      prepare: (workspace) => prepareFile(join(workspace, 'support.db')),
      open: () => ({
        settings: {
          'agentSessions.reviews.location': 'beside-file',
          'agentSessions.agent.command': { 'support-bot': `python3 "${SCRIPT}"` },
          'agentSessions.agent.baseUrl': model.baseUrl,
          'agentSessions.agent.model': 'loopback-model',
        },
      }),
    });

    it('runs from the palette through its questions; the results view shows pass/fail with reasons, and filters failures', async () => {
      const { wb } = suite;
      const page = wb.page;
      await page.setViewportSize({ width: 1500, height: 950 });
      await wb.openSidebar();
      await wb.treeRow('support.db').waitFor(30_000);
      await wb.runCommand('Agent Sessions: Check Agent Against Reviews…');
      // The query: empty, every good turn and every bad turn with a correction.
      await wb.answer('');
      // The agent: the agent command (the built-in agent is offered too, first as the one chosen last).
      const agents = page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row');
      await agents.filter({ hasText: 'Built-in agent (loopback-model)' }).first().waitFor();
      await agents.filter({ hasText: 'support-bot' }).first().click();
      // The graders: trajectory is picked already; answer:normalized is added.
      const graders = page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row');
      await graders.filter({ hasText: 'answer:normalized' }).first().click();
      await page
        .locator('.quick-input-widget:visible .quick-input-list .monaco-list-row[aria-checked="true"]', { hasText: 'answer:normalized' })
        .waitFor();
      await page.keyboard.press('Enter');
      // The tool mode: the setting's (replay) is first.
      await page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'replay' }).first().waitFor();
      await page.keyboard.press('Enter');

      const pane = page.locator('.pane').filter({ has: page.locator('.pane-header', { hasText: 'Check Results' }) });
      const row = (turn: number) => pane.locator('.monaco-list-row', { hasText: `${SESSION}/main turn ${turn}` });
      await row(2).locator('.label-description', { hasText: 'FAIL' }).waitFor({ timeout: 60_000 });
      await row(1).locator('.label-description', { hasText: 'PASS' }).waitFor({ timeout: 60_000 });
      await row(3).locator('.label-description', { hasText: 'PASS' }).waitFor({ timeout: 60_000 });
      assert.match((await row(2).locator('.label-description').textContent()) ?? '', /FAIL · trajectory ✓ answer:normalized ✗/);
      // The bad turn's case: no trajectory mark (its recorded calls are no reference), the not-rejected rule's instead.
      assert.match((await row(3).locator('.label-description').textContent()) ?? '', /PASS · not-rejected ✓ answer:normalized ✓/);
      // The failing grader's reason is under its case, open.
      await pane.locator('.monaco-list-row', { hasText: 'answer:normalized: ' }).first().waitFor();
      await page.locator('.statusbar-item', { hasText: 'Check: 2 passed, 1 failed' }).waitFor({ timeout: 20_000 });
      // The side bar dragged wider, so the picture shows the reasons whole.
      const bar = (await page.locator('.part.sidebar').boundingBox())!;
      await page.mouse.move(bar.x + bar.width + 2, bar.y + bar.height / 2);
      await page.mouse.down();
      await page.mouse.move(bar.x + 760, bar.y + bar.height / 2, { steps: 8 });
      await page.mouse.up();
      await page.mouse.move(5, 5);
      await docsScreenshot(wb, `check-results-${theme}`);

      // Show Failures Only: the passes leave the list; Show All Cases brings them back.
      await pane.hover();
      await pane.locator('.actions-container .action-label[aria-label^="Show Failures Only"]').click();
      await row(1).waitFor({ state: 'detached' });
      assert.equal(await row(2).count(), 1);
      await pane.hover();
      await pane.locator('.actions-container .action-label[aria-label^="Show All Cases"]').click();
      await row(1).waitFor();

      // Saved as an experiment (beside the review store), then compared with it: no flip.
      await wb.runCommand('Agent Sessions: Save Check as Experiment…');
      await wb.answer('baseline');
      // Its message is a toast that may be gone by now: the store appearing says it was saved.
      const store = join(suite.workspace, 'support.db.reviews.experiments.db');
      for (let i = 0; i < 100 && !existsSync(store); i++) await page.waitForTimeout(200);
      assert.ok(existsSync(store), 'the experiment store beside the review store');
      await wb.runCommand('Agent Sessions: Compare Check with Experiment…');
      await page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'baseline' }).first().waitFor();
      await page.keyboard.press('Enter');
      await pane
        .locator('.monaco-list-row', { hasText: 'Against "baseline": 0 regressions, 0 fixes, 3 unchanged' })
        .waitFor({ timeout: 20_000 });

      // Open as Comparison: after the question, the case runs once more onto a kept branch, compared with the recorded.
      await row(2).hover();
      await row(2).locator('.action-label[aria-label^="Open as Comparison"]').click();
      const dialog = page.locator('.monaco-dialog-box', { hasText: `Run case ${SESSION}/main/2 again` });
      await dialog.waitFor();
      await dialog.locator('.monaco-button', { hasText: 'Run and Keep Branch' }).click();
      const c = await compareViewFrame(wb, 'Compare main (recorded) ↔ check-1', 60_000);
      await c.locator('h1.title').waitFor();
      const kept = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: join(suite.workspace, 'support.db'), readonly: true });
      try {
        const last = (await kept.getStoredItems(undefined, 'check-1')).at(-1) as { content?: { text?: string }[] | string };
        assert.equal(Array.isArray(last.content) ? last.content[0]?.text : last.content, 'Answer from default: Can I return the shoes?');
      } finally {
        kept.close();
      }
    });

    it('checks through the built-in agent: the configured model through the configured endpoint, no command', async () => {
      const { wb } = suite;
      const page = wb.page;
      const before = model.requests.length;
      await wb.runCommand('Agent Sessions: Check Agent Against Reviews…');
      await wb.answer('');
      await page
        .locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'Built-in agent (loopback-model)' })
        .first()
        .click();
      // The graders: trajectory and answer:normalized, as above; the tool mode as the setting says.
      const graders = page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row');
      await graders.filter({ hasText: 'answer:normalized' }).first().click();
      await page
        .locator('.quick-input-widget:visible .quick-input-list .monaco-list-row[aria-checked="true"]', { hasText: 'answer:normalized' })
        .waitFor();
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'replay' }).first().waitFor();
      await page.keyboard.press('Enter');
      // Once the model was asked for every case, the check is under way or done (the first check's line is gone).
      for (let i = 0; i < 300 && model.requests.length < before + 3; i++) await page.waitForTimeout(200);
      await page.locator('.statusbar-item', { hasText: 'Check: 2 passed, 1 failed' }).waitFor({ timeout: 60_000 });
      const pane = page.locator('.pane').filter({ has: page.locator('.pane-header', { hasText: 'Check Results' }) });
      const row = (turn: number) => pane.locator('.monaco-list-row', { hasText: `${SESSION}/main turn ${turn}` });
      assert.match((await row(2).locator('.label-description').textContent()) ?? '', /FAIL · trajectory ✓ answer:normalized ✗/);
      await row(1).locator('.label-description', { hasText: 'PASS' }).waitFor();
      await row(3).locator('.label-description', { hasText: 'PASS' }).waitFor();
      // Each case asked the configured model through the configured endpoint, its message last.
      const asked = model.requests.slice(before).map((r) => lastUserText(r.body));
      assert.deepEqual([...asked].sort(), ['Can I return the shoes?', 'Cancel my subscription', 'Where is my order?']);
      assert.ok(model.requests.slice(before).every((r) => r.body.model === 'loopback-model'));
    });
  });
}
