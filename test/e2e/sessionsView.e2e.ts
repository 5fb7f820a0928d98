/**
 * UI tests in a real workbench (code-server) in a real browser (Debian's Chromium), with the packaged VSIX
 * installed, so a file missing from the package (the native addon, a bundle) fails here.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { RESULTS, ROOT, useWorkbench, docsScreenshot } from './suite';
import { currentHost } from '../host/codeServer';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'conformance');

async function branches(path: string, sessionId: string): Promise<string[]> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, readonly: true });
  try {
    return (await s.listBranches()).map((b) => b.branchId).sort();
  } finally {
    s.close();
  }
}

/** Our row of *Developer: Startup Performance*, and the other extensions' `require`s inside our *Load Code* (ms). */
interface Phases {
  loadCode: number;
  requireMs: number | null;
  callActivate: number;
  finishActivate: number;
  earlierRequires: Record<string, number>;
}

describe('sessions view in the workbench (packaged extension)', function () {
  const suite = useWorkbench({
    name: 'sessions',
    prepare: (workspace) => copyFileSync(join(FIXTURES, 'ref-multisession.db'), join(workspace, 'conversations.db')),
  });
  let outside: string;

  before(function () {
    outside = mkdtempSync(join(tmpdir(), 'asi-e2e-files-'));
    copyFileSync(join(FIXTURES, 'ref-basic.db'), join(outside, 'ref-basic.db'));
  });

  after(function () {
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  const shot = async (name: string): Promise<void> => {
    mkdirSync(join(RESULTS, 'screens'), { recursive: true });
    await suite.wb.screenshot(join(RESULTS, 'screens', `${name}.png`));
  };

  it('shows its activity-bar container and discovers the session database in the workspace', async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').waitFor(30_000);
    await shot('01-discovered');
  });

  /** The figure the workbench shows for our row in *Developer: Show Running Extensions* ("…ms"). */
  async function runningExtensionsFigure(): Promise<{ ms: number; shown: string }> {
    await suite.wb.runCommand('Developer: Show Running Extensions');
    const row = suite.wb.page.locator('.monaco-list-row', { has: suite.wb.page.locator('.name', { hasText: 'Agent Session Inspector' }) });
    const time = row.locator('.activation-time');
    // The list is sorted by that figure, slowest first, and draws only the rows in view: scrolled down until ours is.
    const list = suite.wb.page.locator('.runtime-extensions-editor .monaco-list').first();
    await list.waitFor({ timeout: 20_000 });
    for (const deadline = Date.now() + 20_000; !(await time.isVisible()) && Date.now() < deadline;) {
      await list.hover();
      await suite.wb.page.mouse.wheel(0, 200);
      await suite.wb.page.waitForTimeout(100);
    }
    await time.waitFor({ timeout: 1_000 });
    const text = (await time.textContent()) ?? '';
    const m = /(\d+(?:\.\d+)?)\s*ms/.exec(text);
    assert.ok(m, `no activation time in our Running Extensions row: '${text}'`);
    return { ms: Number(m[1]), shown: text.trim() };
  }

  /**
   * Our row of *Developer: Startup Performance*'s "Extension Activation Stats" (ms): loading `main`, `activate`'s
   * call (the two the Running Extensions figure adds up) and the time until the promise it returned resolved.
   */
  async function activationPhases(): Promise<Phases> {
    const id = 'agent-session-inspector.agent-session-inspector';
    // Closes the Running Extensions editor first: on 1.139 it is a modal editor, under which the palette does not open.
    await suite.wb.reset();
    await suite.wb.runCommand('Developer: Startup Performance');
    const editor = suite.wb.page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-line', { hasText: 'System Info' }).waitFor({ timeout: 20_000 });
    // The table is far down a long document and the editor draws only the lines in view: Find brings ours there.
    await editor.locator('.view-lines').click();
    await suite.wb.page.keyboard.press('Control+F');
    await suite.wb.page.keyboard.type(`| ${id}`);
    await suite.wb.page.keyboard.press('Enter');
    const line = editor.locator('.view-line', { hasText: new RegExp(`\\|\\s${id.replace(/\./g, '\\.')}\\s`) }).first();
    await line.waitFor({ timeout: 20_000 });
    // The editor draws spaces as no-break spaces; cells are `| id | eager | load | call | finish | event | by |`.
    const cells = ((await line.textContent()) ?? '').split('|').map((c) => c.replace(/\u00a0/g, ' ').trim());
    const at = cells.indexOf(id);
    const times = cells.slice(at + 2, at + 5).map(Number);
    assert.ok(
      at >= 0 && times.length === 3 && times.every((n) => Number.isFinite(n)),
      `no activation times in our Startup Performance row: '${cells.join('|')}'`,
    );
    // "Load Code" starts before VS Code's own wait for the extension's translations (a round trip to the window when
    // the display language is not `en`), which its extension host's marks around the `require` itself leave out.
    // The marks are an extra (our `require` alone): the report's raw marks of the extension host do not always hold
    // ours (once, on 1.103 under the full suite's load, it listed only the built-in extensions'), and then this says
    // so instead of failing; the figures above are the test's.
    const mark = async (name: string): Promise<number | undefined> => {
      const text = `code/extHost/${name}/${id}`;
      await suite.wb.page.keyboard.press('Control+F');
      await suite.wb.page.keyboard.press('Control+A');
      await suite.wb.page.keyboard.type(text);
      await suite.wb.page.keyboard.press('Enter');
      const markLine = editor.locator('.view-line', { hasText: text }).first();
      try {
        await markLine.waitFor({ timeout: 10_000 });
      } catch {
        console.log(`      (the Startup Performance report holds no mark ${text}: our require's time not read)`);
        return undefined;
      }
      const at = Number(/\s(\d+(?:\.\d+)?)\s/.exec(((await markLine.textContent()) ?? '').replace(/\u00a0/g, ' ').slice(text.length))?.[1]);
      assert.ok(Number.isFinite(at), `no time on the mark ${text}`);
      return at;
    };
    const loaded = await mark('didLoadExtensionCode');
    const loading = loaded === undefined ? undefined : await mark('willLoadExtensionCode');
    const requireMs = loaded === undefined || loading === undefined ? null : Math.round(loaded - loading);
    const [loadCode = 0, callActivate = 0, finishActivate = 0] = times;
    // Other extensions' `require`s that ran while our *Load Code* clock ran: VS Code starts our load, waits a microtask
    // (the translations), and meanwhile every extension whose load started just before ours is required first (on
    // 1.139 the built-in GitHub authentication, 68–136 ms, started as ours was). Read from the marks in view around our
    // own (the report sorts its marks by time): each extension whose `require` lies inside the window from our
    // `require`'s end back by Load Code, a millisecond of rounding either side, with its time.
    const earlierRequires: Record<string, number> = {};
    if (loaded !== undefined && loading !== undefined) {
      const begun = new Map<string, number>();
      for (const raw of await editor.locator('.view-line').allTextContents()) {
        const m = /code\/extHost\/(will|did)LoadExtensionCode\/(\S+)\s+(\d+(?:\.\d+)?)\s/.exec(raw.replace(/\u00a0/g, ' '));
        if (!m || m[2] === id) continue;
        const [, which, ext = '', time] = m;
        const start = begun.get(ext);
        if (which === 'will') begun.set(ext, Number(time));
        else if (start !== undefined && start >= loaded - loadCode - 1 && Number(time) <= loading + 1)
          earlierRequires[ext] = Math.round(Number(time) - start);
      }
    }
    await suite.wb.page.keyboard.press('Escape');
    return { loadCode, requireMs, callActivate, finishActivate, earlierRequires };
  }

  /** VS Code's figure less the other extensions' `require`s that ran inside our *Load Code* (`earlierRequires`). */
  const ownPart = (ms: number, phases: Phases): number => ms - Object.values(phases.earlierRequires).reduce((a, b) => a + b, 0);

  const activationLine = (host: string, when: string, figure: { ms: number; shown: string }, phases: Phases): string =>
    `activation of the extension on ${host}${when}: ${figure.ms} ms ('${figure.shown}'), ` +
    `${ownPart(figure.ms, phases)} ms without other extensions' requires; phases ${JSON.stringify(phases)}`;

  /** The code cache files the extension keeps in its global storage (src/store/files/codeCache.ts). */
  function codeCacheFiles(): string[] {
    const found: string[] = [];
    const walk = (dir: string, depth: number): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const path = join(dir, e.name);
        if (e.name === 'code-cache') found.push(...readdirSync(path).filter((f) => f.endsWith('.bin')));
        else if (depth < 6) walk(path, depth + 1);
      }
    };
    walk(suite.wb.server.stateDir, 0);
    return found;
  }

  it("reads VS Code's own activation time of the extension (Developer: Show Running Extensions), first and later start", async () => {
    // The figure the workbench shows for our row ("…ms": the code loaded and `activate` run), printed and kept in
    // test-results/activation.json for the bench and the release notes (issue 43: activation within 50 ms here). Not
    // asserted against a bound: figures live in the bench, not in timed tests; this fails only when there is none.
    // Two starts: the first after installing (V8 compiles the extension), and one after Reload Window, when the
    // extension is loaded with the code cache the first start kept (src/store/files/codeCache.ts): every later start.
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').waitFor(30_000);
    const first = await runningExtensionsFigure();
    const host = currentHost().id;
    const firstPhases = await activationPhases();
    console.log(activationLine(host, '', first, firstPhases));
    // The caches are written a few seconds after a start (CACHE_WRITE_DELAY_MS), off the first paint's path: the
    // extension's, and the store worker's, which the view's first request started (src/store/worker/storeWorkerLoader.ts);
    // a search worker's a few seconds after its start or as it ends (it is kept for the next search), when a search ran
    // in this window before (an earlier spec's).
    const bundlesCached = (): string[] => codeCacheFiles().map((f) => f.replace(/-[0-9a-f]+\.bin$/, ''));
    const both = (): boolean => ['extensionMain', 'storeWorkerMain'].every((b) => bundlesCached().includes(b));
    const deadline = Date.now() + 30_000;
    while (!both() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const storage = join(suite.wb.server.stateDir, 'ud', 'User', 'globalStorage');
    assert.deepEqual(
      bundlesCached()
        .filter((b) => b !== 'searchWorkerMain')
        .sort(),
      ['extensionMain', 'storeWorkerMain'],
      `not one code cache each for the extension and its store worker after the first start; global storage: ${existsSync(storage) ? readdirSync(storage, { recursive: true }).join(', ') : 'none'}`,
    );
    assert.ok(bundlesCached().filter((b) => b === 'searchWorkerMain').length <= 1, 'one code cache for the search worker at most');
    // Closes the Running Extensions editor first: on 1.139 it is a modal editor, under which the palette does not open.
    await suite.wb.reset();
    const reloaded = suite.wb.page.waitForEvent('load', { timeout: 60_000 });
    await suite.wb.runCommand('Developer: Reload Window');
    await reloaded;
    await suite.wb.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    // The reloaded window restores the side bar it had; a click before it does would close it again.
    await suite.wb
      .viewPane()
      .waitFor({ timeout: 10_000 })
      .catch(() => undefined);
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').waitFor(30_000);
    const later = await runningExtensionsFigure();
    const laterPhases = await activationPhases();
    console.log(activationLine(host, ' after a reload (code cache)', later, laterPhases));
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, 'activation.json');
    const kept = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
    const at = new Date().toISOString();
    writeFileSync(
      file,
      `${JSON.stringify(
        {
          ...kept,
          [host]: {
            activationMs: first.ms,
            shown: first.shown,
            ownMs: ownPart(first.ms, firstPhases),
            phases: firstPhases,
            laterStartMs: later.ms,
            laterShown: later.shown,
            laterOwnMs: ownPart(later.ms, laterPhases),
            laterPhases,
            at,
          },
        },
        null,
        2,
      )}\n`,
    );
  });

  // These two run in order: the first leaves a modal dialog open, the second starts from the state `reset()` left.
  it('leaves a confirmation dialog open (the next test must not see it)', async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').expand();
    await suite.wb.treeRow('alice').expand();
    await suite.wb.treeRow('alt').contextMenu('Delete Branch');
    await suite.wb.page.locator('.monaco-dialog-box', { hasText: "Delete branch 'alt'" }).waitFor();
  });

  it('starts from fresh state after a test left a dialog open', async () => {
    assert.equal(await suite.wb.page.locator('.monaco-dialog-box').isVisible(), false, 'no dialog left over');
    assert.deepEqual(await branches(join(suite.workspace, 'conversations.db'), 'alice'), ['alt', 'main'], 'nothing was deleted');
  });

  it('opens a database chosen through the command palette', async () => {
    await suite.wb.openSidebar();
    await suite.wb.runCommand('Agent Sessions: Open Session Database…');
    await suite.wb.chooseFile(join(outside, 'ref-basic.db'));
    const row = await suite.wb.treeRow('ref-basic.db').waitFor();
    await row.expand();
    await suite.wb.treeRow('basic_session').waitFor();
    await shot('02-opened-from-palette');
  });

  it('browses session → branch → turn and branches from a turn with the context menu', async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').expand();
    await suite.wb.treeRow('alice').expand();
    const mainRow = await suite.wb.treeRow('main').expand();
    assert.match(await mainRow.description(), /current/);
    await suite.wb.treeRow('Turn 2').contextMenu('Branch from Turn');
    // Branching from turn 2 forks before it: the prompt says what the new branch keeps.
    await suite.wb.quickInputMessage().filter({ hasText: "It shares turn 1 with 'main': the next message is its turn 2." }).waitFor();
    // An already-used name is rejected in the input box, before anything is written.
    await suite.wb.quickInput().fill('alt');
    await suite.wb.quickInputMessage().filter({ hasText: 'already been used' }).waitFor();
    await shot('03-branch-name-validation');
    await suite.wb.answer('ui-branch');
    await suite.wb.treeRow('ui-branch').waitFor();
    assert.deepEqual(await branches(join(suite.workspace, 'conversations.db'), 'alice'), ['alt', 'main', 'ui-branch']);
    assert.match(await suite.wb.treeRow('ui-branch').description(), /current · 1 turn · from main @ turn 2/);
    await shot('04-branched-from-turn');
  });

  it('opens a turn as JSON from the context menu: a JSON editor tab VS Code can search and fold', async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').expand();
    // alice is still expanded from the test before: every row is picked under bob's, never by its label alone.
    const bob = await suite.wb.treeRow('bob').expand();
    const turn1 = await (await bob.child('main')).child('Turn 1');
    // Items are labelled by who spoke, not by their stored type.
    await (await turn1.child('User')).waitFor();
    await turn1.contextMenu('Open as JSON');
    const tab = suite.wb.page.locator('.tabs-container .tab', { hasText: 'bob · main · turn 1.json' });
    await tab.waitFor({ timeout: 15_000 });
    const editor = suite.wb.page.locator('.editor-instance .monaco-editor .view-lines').first();
    await editor.locator('.view-line', { hasText: '"session": "bob"' }).waitFor();
    await editor.locator('.view-line', { hasText: '"items": [' }).waitFor();
    // The JSON language mode: VS Code's own folding and outline work on it.
    await suite.wb.page
      .locator('.statusbar-item', { hasText: /^JSON$/ })
      .first()
      .waitFor();
    await shot('05-turn-as-json');
    await docsScreenshot(suite.wb, 'open-as-json');
  });

  // Issue 40, item 5: discovery after start-up. Last in the suite: the rows they add would be in the others' trees.
  it('lists a session database moved into a folder created after the workbench opened', async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').waitFor(30_000);
    // Staged outside the workspace on the same file system, then moved in at once, as `mkdir runs && mv big.db runs/`
    // does: the file is in the folder before a watch on the new folder exists (mostly: without the folder search,
    // this found the file in 1 of 4 runs on the two hosts).
    const staged = join(outside, 'moved-in.db');
    copyFileSync(join(FIXTURES, 'ref-multisession.db'), staged);
    const folder = join(suite.workspace, 'new-runs');
    mkdirSync(folder);
    renameSync(staged, join(folder, 'moved-in.db'));
    const row = await suite.wb.treeRow('moved-in.db').waitFor(20_000);
    await (await row.child('alice')).waitFor();
  });

  it('lists a session database inside a folder moved into the workspace whole', async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').waitFor(30_000);
    // A folder with a database two levels down, made outside the workspace and moved in with one rename, as a
    // download's folder or an unpacked archive arrives: the watcher reports the folder, never the files it brought.
    const incoming = join(outside, 'incoming');
    mkdirSync(join(incoming, 'deeper'), { recursive: true });
    copyFileSync(join(FIXTURES, 'ref-multisession.db'), join(incoming, 'deeper', 'arrived.db'));
    renameSync(incoming, join(suite.workspace, 'arrived'));
    const row = await suite.wb.treeRow('arrived.db').waitFor(20_000);
    await (await row.child('alice')).waitFor();
  });

  it("lists a database no file event reported once the view's Refresh is clicked", async () => {
    await suite.wb.openSidebar();
    await suite.wb.treeRow('conversations.db').waitFor(30_000);
    const path = join(suite.workspace, 'filled-later.db');
    // Created empty (as SQLite and copy tools create a file), so discovery's look at the new file finds no database...
    writeFileSync(path, '');
    await suite.wb.page.waitForTimeout(2000);
    // ...then filled in place: a change event, which discovery does not follow.
    writeFileSync(path, readFileSync(join(FIXTURES, 'ref-multisession.db')));
    await suite.wb.page.waitForTimeout(2000);
    const row = suite.wb.treeRow('filled-later.db');
    assert.equal(await row.locator.count(), 0, 'the filled file is listed before Refresh: no longer a file only Refresh finds');
    // The tree keeps what earlier tests expanded (issue 40, item 8): collapsed, the new file's sessions are drawn
    // within the view's height. Monaco's list draws only the rows in view, so a child below it cannot be found.
    await suite.wb.clickViewAction('Collapse All');
    await suite.wb.clickViewAction('Refresh');
    await row.waitFor(15_000);
    await (await row.child('bob')).waitFor();
  });
});
