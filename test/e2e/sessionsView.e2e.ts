/**
 * UI tests in a real workbench (code-server) in a real browser (Debian's Chromium), with the packaged VSIX
 * installed, so a file missing from the package (the native addon, a bundle) fails here.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { Workbench } from './workbench';

const ROOT = resolve(__dirname, '..', '..');
const VSIX = join(ROOT, 'dist', 'agent-session-inspector.vsix');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'conformance');
export const RESULTS = join(ROOT, 'test-results');

function slug(title: string): string {
  return title
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase()
    .slice(0, 80);
}

async function branches(path: string, sessionId: string): Promise<string[]> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, readonly: true });
  try {
    return (await s.listBranches()).map((b) => b.branchId).sort();
  } finally {
    s.close();
  }
}

describe('sessions view in the workbench (packaged extension)', function () {
  let wb: Workbench;
  let workspace: string;
  let outside: string;

  before(async function () {
    if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first.`);
    workspace = mkdtempSync(join(tmpdir(), 'asi-e2e-ws-'));
    copyFileSync(join(FIXTURES, 'ref-multisession.db'), join(workspace, 'conversations.db'));
    outside = mkdtempSync(join(tmpdir(), 'asi-e2e-files-'));
    copyFileSync(join(FIXTURES, 'ref-basic.db'), join(outside, 'ref-basic.db'));
    wb = await Workbench.open({ folder: workspace, installVsix: [VSIX] });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      const dir = join(RESULTS, 'failures', slug(this.currentTest.fullTitle()));
      await wb?.saveArtifacts(dir);
      console.log(`      artifacts: ${dir}`);
    }
    await wb?.reset().catch(() => undefined);
  });

  after(async function () {
    await wb?.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const shot = async (name: string): Promise<void> => {
    mkdirSync(join(RESULTS, 'screens'), { recursive: true });
    await wb.screenshot(join(RESULTS, 'screens', `${name}.png`));
  };

  it('shows its activity-bar container and discovers the session database in the workspace', async () => {
    await wb.openSidebar();
    await wb.treeRow('conversations.db').waitFor(30_000);
    await shot('01-discovered');
  });

  // These two run in order: the first leaves a modal dialog open, the second starts from the state `reset()` left.
  it('leaves a confirmation dialog open (the next test must not see it)', async () => {
    await wb.openSidebar();
    await wb.treeRow('conversations.db').expand();
    await wb.treeRow('alice').expand();
    await wb.treeRow('alt').contextMenu('Delete Branch');
    await wb.page.locator('.monaco-dialog-box', { hasText: "Delete branch 'alt'" }).waitFor();
  });

  it('starts from fresh state after a test left a dialog open', async () => {
    assert.equal(await wb.page.locator('.monaco-dialog-box').isVisible(), false, 'no dialog left over');
    assert.deepEqual(await branches(join(workspace, 'conversations.db'), 'alice'), ['alt', 'main'], 'nothing was deleted');
  });

  it('opens a database chosen through the command palette', async () => {
    await wb.openSidebar();
    await wb.runCommand('Agent Sessions: Open Session Database…');
    await wb.chooseFile(join(outside, 'ref-basic.db'));
    const row = await wb.treeRow('ref-basic.db').waitFor();
    await row.expand();
    await wb.treeRow('basic_session').waitFor();
    await shot('02-opened-from-palette');
  });

  it('browses session → branch → turn and branches from a turn with the context menu', async () => {
    await wb.openSidebar();
    await wb.treeRow('conversations.db').expand();
    await wb.treeRow('alice').expand();
    const mainRow = await wb.treeRow('main').expand();
    assert.match(await mainRow.description(), /current/);
    await wb.treeRow('Turn 2').contextMenu('Branch from Turn');
    // An already-used name is rejected in the input box, before anything is written.
    await wb.quickInput().fill('alt');
    await wb.quickInputMessage().filter({ hasText: 'already been used' }).waitFor();
    await shot('03-branch-name-validation');
    await wb.answer('ui-branch');
    await wb.treeRow('ui-branch').waitFor();
    assert.deepEqual(await branches(join(workspace, 'conversations.db'), 'alice'), ['alt', 'main', 'ui-branch']);
    assert.match(await wb.treeRow('ui-branch').description(), /current · 1 turn · from main @ turn 2/);
    await shot('04-branched-from-turn');
  });

  it('opens a turn as JSON from the context menu: a JSON editor tab VS Code can search and fold', async () => {
    await wb.openSidebar();
    await wb.treeRow('conversations.db').expand();
    await wb.treeRow('bob').expand();
    await wb.treeRow('main').expand();
    await wb.treeRow('Turn 1').expand();
    // Items are labelled by who spoke, not by their stored type.
    await wb.treeRow('User').waitFor();
    await wb.treeRow('Turn 1').contextMenu('Open as JSON');
    const tab = wb.page.locator('.tabs-container .tab', { hasText: 'bob · main · turn 1.json' });
    await tab.waitFor({ timeout: 15_000 });
    const editor = wb.page.locator('.editor-instance .monaco-editor .view-lines').first();
    await editor.locator('.view-line', { hasText: '"session": "bob"' }).waitFor();
    await editor.locator('.view-line', { hasText: '"items": [' }).waitFor();
    // The JSON language mode: VS Code's own folding and outline work on it.
    await wb.page
      .locator('.statusbar-item', { hasText: /^JSON$/ })
      .first()
      .waitFor();
    await shot('05-turn-as-json');
    mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true });
    await wb.screenshot(join(ROOT, 'docs', 'images', 'open-as-json.png'));
  });
});
