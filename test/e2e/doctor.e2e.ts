/**
 * The doctor in the real workbench (docs/doctor.md, "In VS Code"): *Check Session Store…* on a session of the turn-0
 * usage fixture (test/fixtures/doctor/), its report document with the finding on its branch's line, the Problems
 * panel's entry (what it breaks, the kind), the count badge on the session and the file in the Sessions view; then the
 * Quick Fix: its modal names the row and the backup, the repair runs, the outcome names the backup (on disk), and
 * the Problems entry is gone. Screenshot docs/images/doctor-problems-light.png.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { doctorFixturePath } from '../support/doctorFixtures';
import { FLOW_THEMES, docsScreenshot, useWorkbench } from './suite';
import type { Workbench } from './workbench';

const FILE = 'usage.db';

/** The badge a file decoration draws after a label: CSS content on the label's `::after`. */
async function badgeOf(wb: Workbench, label: string): Promise<string> {
  const row = wb
    .viewPane()
    .locator('.monaco-list-row', { has: wb.page.locator('.label-name', { hasText: label }) })
    .first();
  // The first element under the row whose `::after` draws text (typed by hand: this file has no DOM types).
  const content = await row.evaluate((el) => {
    const g = globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): { content: string } };
    const all = [el, ...Array.from((el as { querySelectorAll(s: string): ArrayLike<unknown> }).querySelectorAll('*'))];
    return all.map((e) => g.getComputedStyle(e, '::after').content).find((c) => c.startsWith('"')) ?? '';
  });
  return content.replace(/^"|"$/g, '');
}

for (const theme of FLOW_THEMES) {
  describe(`the doctor in VS Code (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'doctor',
      theme,
      prepare: (workspace) => copyFileSync(doctorFixturePath('turn-zero-usage'), join(workspace, FILE)),
    });

    it('checks a session into the Problems panel with badges, and a Quick Fix repairs the finding after asking', async () => {
      const { wb } = suite;
      const page = wb.page;
      await page.setViewportSize({ width: 1400, height: 900 });
      await wb.openSidebar();
      await wb.treeRow(FILE).expand();
      await wb.treeRow('alice').contextMenu('Check Session Store…');

      // The report document: the session's branches and turns, the finding on the line of the branch that has none.
      const editor = page.locator('.editor-instance .monaco-editor').first();
      await editor.locator('.view-line', { hasText: 'turn 0 · not on this branch' }).waitFor({ timeout: 30_000 });
      await editor.locator('.view-line', { hasText: 'branch fresh · no rows' }).waitFor();

      // The Problems panel: one entry, what it breaks, the kind.
      await wb.runCommand('Focus on Problems View');
      const markers = page.locator('.markers-panel .monaco-list-row');
      const entry = markers.filter({ hasText: 'Session and branch token totals count a run no turn shows' });
      await entry.first().waitFor({ timeout: 20_000 });
      assert.match((await entry.first().textContent()) ?? '', /turn-zero-usage/);

      // The count badge on the session and on the file.
      for (let i = 0; i < 50 && (await badgeOf(wb, 'alice')) !== '1'; i++) await page.waitForTimeout(100);
      assert.equal(await badgeOf(wb, 'alice'), '1');
      assert.equal(await badgeOf(wb, FILE), '1');
      await page.mouse.move(5, 5);
      await docsScreenshot(wb, `doctor-problems-${theme}`);

      // The Quick Fix, from the entry's light bulb in the Problems panel (a provider's document is read-only, where
      // the editor's own Quick Fix command is disabled).
      await entry.first().hover();
      await entry.first().locator('.codicon-light-bulb, .codicon-lightbulb, .codicon-lightbulb-autofix').first().click();
      const fix = page.locator('.context-view .action-item, .action-widget .monaco-list-row', { hasText: 'Repair: usage row for turn 0' });
      await fix.first().waitFor({ timeout: 15_000 });
      // A click races the menu's opening animation; the keyboard does not (as Workbench's contextMenu does).
      await page.keyboard.press('ArrowDown');
      await page.locator('.context-view .action-item.focused', { hasText: 'Repair: usage row for turn 0' }).waitFor();
      await page.keyboard.press('Enter');
      const dialog = page.locator('.monaco-dialog-box', { hasText: `Repair turn-zero-usage in ${FILE}?` });
      await dialog.waitFor();
      const said = (await dialog.textContent()) ?? '';
      assert.match(said, /turn_usage row 8/);
      assert.match(said, new RegExp(`${FILE}\\.doctor-backup-`));
      await dialog.locator('.monaco-button', { hasText: /^Repair$/ }).click();

      // The outcome names the backup, which is on disk (read in the notification centre: its toast may be gone by
      // then). What is left is not asserted: a kind added to the doctor may find something else after the write.
      await wb.runCommand('Notifications: Show Notifications');
      const outcome = page.locator('.notifications-center .notification-list-item', { hasText: `Repaired turn-zero-usage in ${FILE};` });
      await outcome.first().waitFor({ timeout: 30_000 });
      const backups = readdirSync(suite.workspace).filter((f) => f.startsWith(`${FILE}.doctor-backup-`) && f.endsWith('.db'));
      assert.equal(backups.length, 1);
      assert.ok(existsSync(join(suite.workspace, backups[0]!)));
      assert.match((await outcome.first().textContent()) ?? '', new RegExp(`Backup: .*${backups[0]!.replace(/[.]/g, '\\.')}`));
      await page.keyboard.press('Escape');
      // The Problems panel, shown again, lists the re-check: the entry is gone while the panel is on screen.
      await wb.runCommand('Focus on Problems View');
      await page.locator('.markers-panel').waitFor();
      const left = markers.filter({ hasText: 'turn-zero-usage' });
      for (let i = 0; i < 100 && (await left.count()) > 0; i++) await page.waitForTimeout(100);
      assert.ok(await page.locator('.markers-panel').isVisible(), 'the Problems panel is on screen');
      assert.equal(await left.count(), 0, 'the repaired finding is gone from the Problems panel');
    });
  });
}
