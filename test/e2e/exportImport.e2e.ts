/**
 * Export and re-import in the real workbench (packaged extension), in the light and the dark theme: *Export
 * Session…* from a session's context menu (format pick, save dialog) writes the store's JSON export, and *Import
 * Conversation…* from the database's context menu (open dialog, the offered session id) brings it back as a new
 * session that the tree reveals; the conversation view's "…" menu exports the branch it shows. Screenshots for the docs.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { exportSession, type ExportFormat } from '../../src/store';
import { FLOW_THEMES, useWorkbench, docsScreenshot } from './suite';
import { viewFrame } from './workbench';

async function exported(path: string, sessionId: string, format: ExportFormat = 'json', branchId?: string): Promise<string> {
  let text = '';
  await exportSession(path, format, { sessionId, branchId }, (c) => {
    text += c;
  });
  return text;
}

for (const theme of FLOW_THEMES) {
  describe(`export and import in the workbench (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'export',
      theme,
      prepare: (workspace) => writeDemoDatabase(join(workspace, 'conversations.db')),
      reset: false,
    });
    let db: string;

    before(async function () {
      db = join(suite.workspace, 'conversations.db');
      await suite.wb.page.setViewportSize({ width: 1400, height: 900 });
    });

    it('exports a session as JSON from its context menu, then imports it as a new session', async () => {
      await suite.wb.openSidebar();
      await suite.wb.treeRow('conversations.db').expand();
      await suite.wb.treeRow('weather-trip').contextMenu('Export Session…');
      // The format pick: JSON is the first entry left after typing its name.
      await suite.wb.page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'JSONL' }).waitFor();
      await docsScreenshot(suite.wb, `export-session-${theme}`);
      await suite.wb.answer('JSON');
      // The save dialog (the workbench's own, a quick input) offers <session>.json next to the database.
      const target = join(suite.workspace, 'weather-trip.json');
      assert.equal(await suite.wb.settledInputValue((v) => v === target), target, 'the offered file name');
      await suite.wb.page.keyboard.press('Enter');
      // The file is written under a temporary name and renamed when complete.
      for (let i = 0; i < 300 && !existsSync(target); i++) await suite.wb.page.waitForTimeout(100);
      assert.equal(readFileSync(target, 'utf8'), await exported(db, 'weather-trip'));

      await suite.wb.treeRow('conversations.db').contextMenu('Import Conversation…');
      await suite.wb.chooseFile(target);
      // The file's session id is taken in this database, so another one is offered.
      assert.equal(
        await suite.wb.settledInputValue((v) => v === 'weather-trip-imported'),
        'weather-trip-imported',
        'the offered session id',
      );
      await suite.wb.quickInput().fill('weather-trip');
      await suite.wb.quickInputMessage().filter({ hasText: 'already has a session weather-trip' }).waitFor();
      await suite.wb.answer('weather-trip-copy');
      const row = await suite.wb.treeRow('weather-trip-copy').waitFor(30_000);
      await row.expand();
      await suite.wb.treeRow('lisbon-instead').waitFor();
      await docsScreenshot(suite.wb, `import-conversation-${theme}`);
      const again = await exported(db, 'weather-trip-copy');
      const first = readFileSync(target, 'utf8');
      assert.equal(
        again.slice(again.indexOf('"messages"')),
        first.slice(first.indexOf('"messages"')),
        'byte-identical items and structure',
      );
    });

    it("exports the shown branch as Markdown from the conversation view's … menu", async () => {
      // From the palette (the session picker): the tree is still settling after the import's reveal, and a right-click
      // on a row it re-renders reaches the command without its node.
      await suite.wb.openSidebar();
      await suite.wb.treeRow('conversations.db').waitFor();
      // The session pick once, or what the workbench showed instead. On CI's loaded runner the pick once failed to show
      // within 30 s of the palette's Enter (stop 36, not seen in runs alone since): the palette is tried again, and a
      // pick that never shows fails with the notifications and quick input on screen, so it can be told apart.
      const pick = suite.wb.page
        .locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'weather-trip' })
        .first();
      for (let attempt = 1; ; attempt++) {
        await suite.wb.runCommand('Agent Sessions: Open Conversation View');
        // The session itself, not the copy the previous test imports: this test stands without that one.
        if (
          await pick.waitFor({ timeout: 10_000 }).then(
            () => true,
            () => false,
          )
        ) {
          // Answered here, not after the loop: the settling tree can take the focus and close the pick between
          // seeing it and typing (a full run, 1.103, dark: the input never came back within 30 s). Then try again.
          const answered = await suite.wb
            .quickInput()
            .fill('weather-trip', { timeout: 5_000 })
            .then(
              () => true,
              () => false,
            );
          if (answered) {
            await suite.wb.page.keyboard.press('Enter');
            break;
          }
          if (attempt === 3) throw new Error('the session pick closed before it could be answered, 3 times');
          console.warn(`      (the session pick closed before it was answered after palette run ${attempt}; trying again)`);
          continue;
        }
        const shown = await suite.wb.page.locator('.notification-list-item-message, .quick-input-widget:visible').allTextContents();
        const what =
          shown
            .map((t) => t.trim())
            .filter(Boolean)
            .join(' | ') || 'no notification, no quick input';
        if (attempt === 3) throw new Error(`the session pick never showed after 3 palette runs; on screen: ${what}`);
        console.warn(`      (the session pick did not show after palette run ${attempt}; on screen: ${what}; trying again)`);
        await suite.wb.page.keyboard.press('Escape');
      }
      const f = await viewFrame(suite.wb);
      await f.locator('.turn-row').first().waitFor({ timeout: 20_000 });
      await f.locator('.more-button').click();
      const entry = f.locator('.more-menu .menu-entry.export-branch');
      // The entry names the branch the view shows (the session's current one when the view opens).
      const shown = /^Export branch (.+)…$/.exec((await entry.textContent()) ?? '')?.[1] ?? '';
      assert.ok(shown, 'the export entry names the shown branch');
      await entry.click();
      await suite.wb.page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'Markdown' }).waitFor();
      await suite.wb.answer('Markdown');
      // The save dialog offers <session>-<branch>.md next to the database, the branch being the one the view shows.
      const offered = await suite.wb.settledInputValue((v) => v.endsWith('.md'));
      const target = join(suite.workspace, `weather-trip-${shown}.md`);
      assert.equal(offered, target, 'the offered file name');
      await suite.wb.page.keyboard.press('Enter');
      for (let i = 0; i < 300 && !existsSync(target); i++) await suite.wb.page.waitForTimeout(100);
      const text = readFileSync(target, 'utf8');
      assert.equal(text, await exported(db, 'weather-trip', 'md', shown));
      assert.match(text, new RegExp(`^# Session \`weather-trip\` — branch \`${shown}\`\n`));
    });
  });
}
