/**
 * Reviewing turns in the real workbench (docs/reviews.md): Good from the turn's review bar, B on a turn in the list,
 * tags toggled and one of the user's own added, a note saved with Ctrl+Enter; the marks in the turn list; all of it
 * still there when the view is opened again (kept in the review store beside the session file, which is unchanged).
 * Review Next walking a queue from the status bar; the MCP server in VS Code's MCP servers list; a dataset's first
 * record shown before it is saved. Screenshots for the docs in both themes.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { THEMES, docsScreenshot, useWorkbench } from './suite';
import { compareViewFrame, openConversationView, viewFrame } from './workbench';

for (const theme of THEMES) {
  describe(`reviewing turns (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'review',
      theme,
      prepare: (workspace) => writeDemoDatabase(join(workspace, 'conversations.db')),
      // Kept beside the session file: each suite's workspace has its own reviews (the extension's storage is shared
      // by every suite of this workbench's server).
      open: { settings: { 'agentSessions.reviews.location': 'beside-file' } },
    });

    it('marks turns good and bad, tags them, writes a note; the marks stay, the session file is untouched', async () => {
      const { wb } = suite;
      const db = join(suite.workspace, 'conversations.db');
      const sha = () => createHash('sha256').update(readFileSync(db)).digest('hex');
      const before = sha();
      let f = await openConversationView(wb, 'conversations.db', 'support-chat');
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      const bar = f.locator('.review-bar');
      await bar.locator('.verdict-good').click();
      await f.locator('.turn-row[data-turn="1"] .turn-verdict.verdict-good').waitFor({ timeout: 20_000 });
      assert.equal(await bar.locator('.verdict-good').getAttribute('aria-pressed'), 'true');
      await bar.locator('.review-tag', { hasText: 'too-slow' }).click();
      await bar.locator('.review-tag[aria-pressed="true"]', { hasText: 'too-slow' }).waitFor();

      // Turn 2 from the keyboard: B in the list.
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      await f.locator('.turn-list').press('b');
      await f.locator('.turn-row[data-turn="2"] .turn-verdict.verdict-bad').waitFor({ timeout: 20_000 });
      await bar.locator('.review-tag', { hasText: 'wrong-tool' }).click();
      await bar.locator('.review-tag[aria-pressed="true"]', { hasText: 'wrong-tool' }).waitFor({ timeout: 20_000 });
      await bar.locator('.review-new-tag').fill('Needs Fahrenheit');
      await bar.locator('.review-new-tag').press('Enter');
      await bar.locator('.review-tag[aria-pressed="true"]', { hasText: 'needs-fahrenheit' }).waitFor({ timeout: 20_000 });
      await bar.locator('.review-note').fill('Answered in Celsius although the user asked for Fahrenheit.');
      await bar.locator('.review-note').press('Control+Enter');
      // Saving says so (the field looks the same saved or not).
      await bar.locator('.review-note-status', { hasText: 'Note saved' }).waitFor({ timeout: 20_000 });
      await f.locator('.turn-row[data-turn="2"] .turn-verdict', { hasText: 'needs-fahrenheit' }).waitFor({ timeout: 20_000 });
      assert.match(
        (await f.locator('.turn-row[data-turn="2"]').getAttribute('aria-label')) ?? '',
        /reviewed bad, needs-fahrenheit, wrong-tool/,
      );
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `review-turn-${theme}`);

      // Opened again: read back from the review store.
      await wb.runCommand('View: Close All Editors');
      f = await openConversationView(wb, 'conversations.db', 'support-chat');
      await f.locator('.turn-row[data-turn="1"] .turn-verdict.verdict-good', { hasText: 'too-slow' }).waitFor({ timeout: 20_000 });
      await f.locator('.turn-row[data-turn="2"] .turn-verdict.verdict-bad').waitFor();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      assert.equal(await f.locator('.review-bar .review-note').inputValue(), 'Answered in Celsius although the user asked for Fahrenheit.');
      // Taken back: pressing Bad again leaves no verdict, the tags stay.
      await f.locator('.review-bar .verdict-bad').click();
      await f.locator('.turn-row[data-turn="2"] .turn-verdict:not(.verdict-bad)').waitFor({ timeout: 20_000 });
      assert.equal(sha(), before, 'the session file is not written');
      // Beside the file, as this suite's settings ask: a store of its own, found by the file's name.
      assert.ok(existsSync(`${db}.reviews.db`), 'the review store beside the session file');
    });

    it('judges compared turns: keys and buttons, a tally per column, kept beside the file', async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      // A turn verdict given in the conversation view shows as a mark in the comparison too.
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      await f.locator('.review-bar .verdict-good').click();
      await f.locator('.turn-row[data-turn="3"] .turn-verdict.verdict-good').waitFor({ timeout: 20_000 });
      await f.locator('.compare-branch').click();
      await wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: 'Compare main with' }).waitFor();
      await wb.answer('lisbon-instead');
      const c = await compareViewFrame(wb, 'Compare main ↔ lisbon-instead');
      const first = c.locator('.compare-row').first();
      await first.locator('.verdict-bar').waitFor({ timeout: 20_000 });
      // The first compared turn (3, where the branches part) is marked on main's side only.
      await first.locator('.compare-cell[data-column="0"] .turn-verdict.verdict-good').waitFor({ timeout: 20_000 });
      assert.equal(await first.locator('.compare-cell[data-column="1"] .turn-verdict').count(), 0);
      // The keyboard on the focused row: 2 = the other column's answer was better.
      await first.click({ position: { x: 5, y: 5 } });
      await c.locator('.compare-row.focused').press('2');
      await first.locator('.verdict-right[aria-pressed="true"]').waitFor({ timeout: 20_000 });
      const second = c.locator('.compare-row').nth(1);
      await second.locator('.verdict-tie').click();
      await second.locator('.verdict-tie[aria-pressed="true"]').waitFor({ timeout: 20_000 });
      const tally = c.locator('.compare-card').nth(1).locator('.verdict-tally');
      await tally.waitFor({ timeout: 20_000 });
      assert.equal(await tally.textContent(), 'Verdicts: 1 better, 0 worse, 1 ties, 0 both bad');
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `review-compare-${theme}`);
      // The same button again takes the verdict back.
      await second.locator('.verdict-tie').click();
      await second.locator('.verdict-tie[aria-pressed="false"]').waitFor({ timeout: 20_000 });
      assert.equal(await tally.textContent(), 'Verdicts: 1 better, 0 worse, 0 ties, 0 both bad');
    });

    it('keeps a correction of an answer without touching the session file, continues from it on a branch, removes it', async () => {
      const { wb } = suite;
      const db = join(suite.workspace, 'conversations.db');
      const sha = () => createHash('sha256').update(readFileSync(db)).digest('hex');
      const before = sha();
      await wb.runCommand('View: Close All Editors');
      let f = await openConversationView(wb, 'conversations.db', 'support-chat');
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      const answer = f.locator('.item-assistant').last();
      await answer.locator('.correct-button').click();
      const input = answer.locator('.correction-input');
      await input.waitFor();
      assert.ok((await input.inputValue()).length > 0, 'the form starts from the answer as given');
      await input.fill('Hello! I can look up the weather and convert temperatures. Where are you going?');
      await answer.locator('.correction-save').click();
      await answer.locator('.correction-text', { hasText: 'Where are you going?' }).waitFor({ timeout: 20_000 });
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `review-correction-${theme}`);
      // Opened again: read back from the review store.
      await wb.runCommand('View: Close All Editors');
      f = await openConversationView(wb, 'conversations.db', 'support-chat');
      await f.locator('.turn-row[data-turn="1"]').click();
      const kept = f.locator('.item-assistant').last().locator('.correction-text');
      await kept.waitFor({ timeout: 20_000 });
      assert.equal(await kept.textContent(), 'Hello! I can look up the weather and convert temperatures. Where are you going?');
      assert.equal(sha(), before, 'keeping a correction does not write the session file');
      // Continue from the corrected answer: a branch with turn 1 again, ending with it; the view shows that branch.
      await f.locator('.item-assistant').last().locator('.correction-branch').click();
      assert.equal(await wb.settledInputValue((v) => v === 'corrected-1'), 'corrected-1');
      await wb.answer('corrected-1');
      await f.locator('.lane.selected[data-branch="corrected-1"]').waitFor({ timeout: 20_000 });
      await f.locator('.turn-row[data-turn="1"]').click();
      const continued = f.locator('.item-assistant', { hasText: 'Where are you going?' });
      await continued.waitFor({ timeout: 20_000 });
      // On the branch it is the answer as stored, not a correction of one.
      await continued.locator('.correct-button').waitFor();
      await f.locator('.lane[data-branch="main"]').click();
      await f.locator('.lane.selected[data-branch="main"]').waitFor();
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.item-assistant').last().locator('.correction-text').waitFor({ timeout: 20_000 });
      await f.locator('.item-assistant').last().locator('.correction-remove').click();
      await f.locator('.item-assistant').last().locator('.correct-button').waitFor({ timeout: 20_000 });
    });

    it('hands a turn over to the chat from the view and the palette, or says how to get one', async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      // The view's button, on the selected turn: without a chat (code-server has no language model), the message.
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      await f.locator('.ask-copilot').click();
      await wb.page.waitForTimeout(3000); // the hand-over waits up to 2 s for the language models to be listed
      await wb.runCommand('Notifications: Show Notifications');
      await wb.page.locator('.notifications-center .notification-list-item', { hasText: 'GitHub Copilot Chat' }).first().waitFor();
      await wb.runCommand('Notifications: Clear All Notifications');
      await wb.runCommandUntil(
        'Agent Sessions: Ask Copilot about This Turn',
        wb.page.locator('.quick-input-widget:visible .monaco-list-row', { hasText: 'weather-trip' }),
      );
      await wb.answer('weather-trip');
      await wb.page.locator('.quick-input-widget:visible .monaco-list-row', { hasText: 'Turn 2' }).first().waitFor();
      await wb.answer('Turn 2');
      // Either the chat opens with the prompt (a chat with a model is installed), or a message says how to get one
      // (read in the notification centre: a toast may be gone by then).
      const chatInput = wb.page.locator('.interactive-input-part .monaco-editor .view-lines', { hasText: '#readTurns' });
      if (!(await chatInput.first().isVisible())) {
        await wb.page.waitForTimeout(3000); // the hand-over waits up to 2 s for the language models to be listed
        await wb.runCommand('Notifications: Show Notifications');
      }
      const noChat = wb.page.locator('.notifications-center .notification-list-item', { hasText: 'GitHub Copilot Chat' });
      await chatInput.or(noChat).first().waitFor({ timeout: 20_000 });
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `hand-over-${theme}`);
      if (await noChat.count()) assert.match((await noChat.first().textContent()) ?? '', /The prompt is on the clipboard/);
      else assert.match((await chatInput.first().textContent()) ?? '', /weather-trip/);
      await wb.page.keyboard.press('Escape');
    });

    it('walks a review queue: Review Next shows each matching turn, G gives the verdict and goes on', async () => {
      const { wb } = suite;
      await wb.runCommand('View: Close All Editors');
      await wb.runCommand('Agent Sessions: Review Next');
      assert.equal(await wb.settledInputValue((v) => v === 'reviewed:no'), 'reviewed:no', 'the query offered first');
      await wb.answer('reviewed:no');
      // The status bar counts the queue ("Review 1/7"); the first turn opens in the conversation view, selected.
      const status = (position: number) => wb.page.locator('.statusbar-item', { hasText: new RegExp(`Review ${position}/\\d+`) });
      await status(1).first().waitFor({ timeout: 30_000 });
      const total = Number(/Review 1\/(\d+)/.exec((await status(1).first().textContent()) ?? '')?.[1]);
      assert.ok(total >= 2, `the demo's unreviewed turns: ${total}`);
      let f = await viewFrame(wb);
      await f.locator('.turn-row.selected').waitFor({ timeout: 20_000 });
      // One keystroke per turn: G on the queued turn keeps the verdict and shows the next.
      await f.locator('.turn-list').press('g');
      await status(2).first().waitFor({ timeout: 20_000 });
      f = await viewFrame(wb);
      await f.locator('.turn-row.selected').waitFor({ timeout: 20_000 });
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `review-next-${theme}`);
      await wb.runCommand('Agent Sessions: Stop Review Queue');
      await wb.page
        .locator('.statusbar-item', { hasText: /Review \d+\// })
        .first()
        .waitFor({ state: 'hidden', timeout: 20_000 });
    });

    it('builds a dataset from the reviews and shows the first record before asking where to save', async () => {
      const { wb } = suite;
      await wb.runCommand('Agent Sessions: Export Dataset from Reviews…');
      await wb.page.locator('.quick-input-widget:visible .monaco-list-row', { hasText: 'support-chat' }).first().waitFor();
      await wb.answer('support-chat');
      await wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: 'Dataset format' }).waitFor();
      await wb.answer('Supervised fine-tuning');
      // No filter picked: every review of the session (turn 1 was judged good in the first test).
      await wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: 'Dataset filters' }).waitFor();
      await wb.page.keyboard.press('Enter');
      await wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: 'Redaction' }).waitFor();
      await wb.answer('Hide API keys');
      const preview = wb.page.locator('.monaco-dialog-box', { hasText: 'records from session support-chat' });
      await preview.waitFor({ timeout: 30_000 });
      assert.match((await preview.textContent()) ?? '', /First record: \{"messages":\[/);
      await docsScreenshot(wb, `dataset-preview-${theme}`);
      // Not saved: nothing is written where the user did not say.
      await wb.page.keyboard.press('Escape');
      await preview.waitFor({ state: 'hidden' });
    });
  });
}
