/**
 * Export and re-import in the real workbench (packaged extension), in the light and the dark theme: *Export
 * Session…* from a session's context menu (format pick, save dialog) writes the store's JSON export, and *Import
 * Conversation…* from the database's context menu (open dialog, the offered session id) brings it back as a new
 * session that the tree reveals. Screenshots for the docs.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { exportSession } from '../../src/store';
import { Workbench } from './workbench';

const ROOT = resolve(__dirname, '..', '..');
const VSIX = join(ROOT, 'dist', 'agent-session-inspector.vsix');
const RESULTS = join(ROOT, 'test-results');
const IMAGES = join(ROOT, 'docs', 'images');

async function exportedJson(path: string, sessionId: string): Promise<string> {
  let text = '';
  await exportSession(path, 'json', { sessionId }, (c) => {
    text += c;
  });
  return text;
}

for (const theme of ['light', 'dark'] as const) {
  describe(`export and import in the workbench (${theme} theme)`, function () {
    let wb: Workbench;
    let workspace: string;
    let db: string;

    before(async function () {
      if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first.`);
      workspace = mkdtempSync(join(tmpdir(), `asi-e2e-export-${theme}-`));
      db = join(workspace, 'conversations.db');
      await writeDemoDatabase(db);
      wb = await Workbench.open({
        folder: workspace,
        installVsix: [VSIX],
        settings: { 'workbench.colorTheme': theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern' },
      });
      await wb.page.setViewportSize({ width: 1400, height: 900 });
    });

    afterEach(async function () {
      if (this.currentTest?.state === 'failed') {
        const dir = join(RESULTS, 'failures', `export-${theme}-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
        await wb?.saveArtifacts(dir);
        console.log(`      artifacts: ${dir}`);
      }
    });

    after(async function () {
      await wb?.close();
      rmSync(workspace, { recursive: true, force: true });
    });

    it('exports a session as JSON from its context menu, then imports it as a new session', async () => {
      await wb.openSidebar();
      await wb.treeRow('conversations.db').expand();
      await wb.treeRow('weather-trip').contextMenu('Export Session…');
      // The format pick: JSON is the first entry left after typing its name.
      await wb.page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: 'JSONL' }).waitFor();
      mkdirSync(IMAGES, { recursive: true });
      await wb.screenshot(join(IMAGES, `export-session-${theme}.png`));
      await wb.answer('JSON');
      // The save dialog (the workbench's own, a quick input) offers <session>.json next to the database.
      const input = wb.quickInput();
      await input.waitFor();
      const target = join(workspace, 'weather-trip.json');
      for (let i = 0; i < 50 && (await input.inputValue()) !== target; i++) await wb.page.waitForTimeout(100);
      assert.equal(await input.inputValue(), target, 'the offered file name');
      await wb.page.keyboard.press('Enter');
      // The file is written under a temporary name and renamed when complete.
      for (let i = 0; i < 300 && !existsSync(target); i++) await wb.page.waitForTimeout(100);
      assert.equal(readFileSync(target, 'utf8'), await exportedJson(db, 'weather-trip'));

      await wb.treeRow('conversations.db').contextMenu('Import Conversation…');
      await wb.chooseFile(target);
      // The file's session id is taken in this database, so another one is offered.
      const id = wb.quickInput();
      await id.waitFor();
      assert.equal(await id.inputValue(), 'weather-trip-imported');
      await id.fill('weather-trip');
      await wb.quickInputMessage().filter({ hasText: 'already has a session weather-trip' }).waitFor();
      await wb.answer('weather-trip-copy');
      const row = await wb.treeRow('weather-trip-copy').waitFor(30_000);
      await row.expand();
      await wb.treeRow('lisbon-instead').waitFor();
      await wb.screenshot(join(IMAGES, `import-conversation-${theme}.png`));
      const again = await exportedJson(db, 'weather-trip-copy');
      const first = readFileSync(target, 'utf8');
      assert.equal(
        again.slice(again.indexOf('"messages"')),
        first.slice(first.indexOf('"messages"')),
        'byte-identical items and structure',
      );
    });
  });
}
