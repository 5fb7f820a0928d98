/**
 * A helper layer over the code-server workbench with stable selectors, so UI tests read like user stories:
 * `await wb.runCommand('Agent Sessions: Open Session Database…')`, `await wb.treeRow('alice').expand()`.
 * Selectors follow the DOM of VS Code 1.103 and 1.139 (code-server 4.103.2 and 4.139.1; see hostTools' HOSTS).
 */
import { mkdirSync, writeFileSync, copyFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Dialog, Frame, FrameLocator, Locator, Page } from 'playwright-core';
import { VIEWPORT, launchBrowser, type Browser } from '../host/browser';
import { CodeServer, type CodeServerOptions } from '../host/codeServer';

export const CONTAINER_TITLE = 'Agent Sessions';
export const VIEW_TITLE = 'Session Databases';

export interface WorkbenchOptions extends CodeServerOptions {
  /** Load the extension from this folder (development mode) instead of an installed VSIX. */
  extensionDevelopmentPath?: string;
  /**
   * The workbench's display language (`vscode.env.language`, hence the extension's package.nls.<lang>.json and
   * l10n bundle). code-server takes it only from an installed language pack (`--locale` or argv.json's `locale`
   * without a pack leaves the workbench in English): the pack's nls.messages.js sets `_VSCODE_NLS_LANGUAGE` before the
   * workbench starts, and this sets the same global, so the extension is in that language while VS Code's own UI,
   * having no translations, stays English.
   */
  displayLanguage?: string;
  /** The extension's container and view titles as the workbench shows them (they are localized too). */
  titles?: { container: string; view: string };
  /**
   * Runs once the server is up and before the first window opens (the extension host, hence the extension's global
   * storage, starts with that window): for files the extension must find in the server's user data folder.
   */
  beforeWindow?: (server: CodeServer) => void | Promise<void>;
}

export class Workbench {
  readonly console: string[] = [];
  private constructor(
    readonly server: CodeServer,
    private readonly browser: Browser,
    readonly page: Page,
    private readonly titles = { container: CONTAINER_TITLE, view: VIEW_TITLE },
  ) {}

  static async open(options: WorkbenchOptions): Promise<Workbench> {
    const server = await CodeServer.start(options);
    let browser: Browser | undefined;
    try {
      browser = await launchBrowser();
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      const wb = new Workbench(server, browser, page, options.titles);
      if (options.displayLanguage)
        await page.addInitScript(`globalThis._VSCODE_NLS_LANGUAGE = ${JSON.stringify(options.displayLanguage)};`);
      wb.listen();
      await options.beforeWindow?.(server);
      const payload: [string, string][] | undefined = options.extensionDevelopmentPath
        ? [
            ['extensionDevelopmentPath', server.remoteUri(options.extensionDevelopmentPath)],
            ['skipWelcome', 'true'],
          ]
        : undefined;
      await page.goto(server.workbenchUrl(payload));
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await wb.activityBarIcon().waitFor({ timeout: 60_000 });
      return wb;
    } catch (err) {
      await browser?.close();
      await server.stop({ keepState: true });
      throw err;
    }
  }

  /** Keeps the page's console lines (every frame's) for the failure artifacts and the CSP checks. */
  private listen(): void {
    this.page.on('console', (m) => this.console.push(`[${m.type()}] ${m.text()}`));
    this.page.on('pageerror', (e) => this.console.push(`[pageerror] ${e.message}`));
  }

  /**
   * The same server and browser, a new window: `folder` opened with `settings` (over the harness' own), as if the
   * workbench had been opened for it. The previous window is closed first (its extension host ends with it); what the
   * previous user left behind is cleared: the page's listeners and console, the browser's storage for the workbench's
   * origin (the workbench's global state and secret storage live there), the viewport. The browser's HTTP cache
   * stays, which is what makes this about 7 s faster than opening a workbench (measured 2026-12-02: 1.8 s to the
   * activity bar and 3.5 s to a first conversation view, against 7.5 s and 5.4 s).
   */
  async reopen(folder: string, settings: Record<string, unknown> = {}): Promise<void> {
    await this.release();
    this.console.length = 0;
    const cdp = await this.page.context().newCDPSession(this.page);
    try {
      await cdp.send('Storage.clearDataForOrigin', {
        origin: this.server.url,
        storageTypes: 'cookies,local_storage,indexeddb,websql,file_systems',
      });
    } finally {
      await cdp.detach();
    }
    await this.page.setViewportSize(VIEWPORT);
    this.server.writeUserSettings(settings);
    await this.page.goto(this.server.workbenchUrl(undefined, folder));
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await this.activityBarIcon().waitFor({ timeout: 60_000 });
  }

  /**
   * Closes the window (its extension host lets go of the workspace's files) and leaves the page blank, with none of
   * the suite's page listeners.
   */
  async release(): Promise<void> {
    // The suite's own listeners go with it (one that holds a dialog would hold the navigation below).
    this.page.removeAllListeners();
    this.listen();
    // A beforeunload prompt (a dirty editor) must not keep the old window open.
    const accept = (d: Dialog): void => void d.accept().catch(() => undefined);
    this.page.on('dialog', accept);
    try {
      await this.page.goto('about:blank');
    } finally {
      this.page.off('dialog', accept);
    }
  }

  activityBarIcon(): Locator {
    return this.page.locator(`.activitybar .action-item a[aria-label^="${this.titles.container}"]`);
  }

  /** Opens the extension's sidebar container (if it is not already showing). */
  async openSidebar(): Promise<void> {
    const pane = this.viewPane();
    if (!(await pane.isVisible())) await this.activityBarIcon().click();
    await pane.waitFor();
  }

  viewPane(): Locator {
    return this.page.locator('.pane').filter({ has: this.page.locator('.pane-header', { hasText: this.titles.view }) });
  }

  /**
   * Waits until the sessions view's rows have not changed for `quietMs` (at most `timeoutMs`). A context-menu entry
   * runs on the row's element as the extension last gave it, and a tree refreshed while the menu is open (a new
   * workbench's first file events) may leave it on an element the extension no longer has. Twice in nine full runs,
   * and once in a run of the UI suite alone, the first spec of a 1.139 workbench saw the menu close on Enter and
   * nothing open (the conversation view; Compare with…).
   */
  async treeSettled(quietMs = 500, timeoutMs = 5000): Promise<void> {
    const rows = this.viewPane().locator('.monaco-list-rows').first();
    const deadline = Date.now() + timeoutMs;
    let last = await rows.innerHTML().catch(() => '');
    let since = Date.now();
    while (Date.now() - since < quietMs && Date.now() < deadline) {
      await this.page.waitForTimeout(100);
      const now = await rows.innerHTML().catch(() => '');
      if (now !== last) {
        last = now;
        since = Date.now();
      }
    }
  }

  /**
   * Clicks the sessions view's title action `title` ("Refresh"). With one view in the container its actions are in the
   * side bar's title, else in the view's header; either way they show while the pointer is over the side bar.
   */
  async clickViewAction(title: string): Promise<void> {
    await this.openSidebar();
    await this.viewPane().hover();
    const action = this.page.locator(`.part.sidebar .actions-container .action-label[aria-label^="${title}"]:visible`).first();
    await action.click();
  }

  /**
   * Takes the keyboard focus out of a webview: keys pressed while a webview's frame has the focus go to that frame,
   * where F1 and Escape do not reach the workbench (a reset then waited 30 s for a palette that never opened).
   */
  async focusWorkbench(): Promise<void> {
    // A string: this file is compiled without the DOM's types.
    await this.page.evaluate("document.activeElement?.tagName === 'IFRAME' && document.activeElement.blur()");
  }

  /**
   * Runs a command from the palette by its full title ("Category: Title"). A webview that takes the focus back (two
   * views side by side, one just drawn) closes the palette as it opens; waiting for it then took Playwright's whole 30 s
   * and failed, up to three times a UI run in the resets between tests. So each try waits 10 s for the palette (3 s to type
   * into it), and the next one first moves the focus to the side bar's title, outside every webview.
   */
  async runCommand(title: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input.input');
    const row = this.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: title });
    for (let attempt = 1; ; attempt++) {
      try {
        await this.focusWorkbench();
        await this.page.keyboard.press('F1');
        await input.waitFor({ timeout: 10_000 });
        // Shown and then not editable: the palette closed again (a visible input fills at once).
        await input.fill(`>${title}`, { timeout: 3_000 });
        await row.waitFor({ timeout: 10_000 });
        break;
      } catch (err) {
        if (attempt === 3) throw err;
        console.log(`      the palette did not take "${title}" (${String(err).split('\n')[0]}): again`);
        await this.page.keyboard.press('Escape');
        // The side bar's title: the window's title is under a drag region, which takes the click.
        const neutral = this.page.locator('.part.sidebar .composite.title .title-label').first();
        if (await neutral.isVisible()) await neutral.click({ timeout: 5000 }).catch(() => undefined);
      }
    }
    await this.page.keyboard.press('Enter');
  }

  /**
   * Runs a command that opens a quick input and waits for `shown` in it. The palette hands the focus back as it closes,
   * and a webview that takes it (the conversation view, just clicked) closes a pick the command opened meanwhile:
   * under a full run's load the session pick of *Ask Copilot about This Turn* was gone before it could be seen, once
   * in four runs. So each try waits 10 s, and the next first moves the focus to the side bar's title, outside every
   * webview. A command that never opens the pick fails all three.
   */
  async runCommandUntil(title: string, shown: Locator): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await this.runCommand(title);
      try {
        await shown.first().waitFor({ timeout: 10_000 });
        return;
      } catch (err) {
        if (attempt === 3) throw err;
        console.log(`      "${title}" showed no pick (${String(err).split('\n')[0]}): again`);
        await this.page.keyboard.press('Escape');
        const neutral = this.page.locator('.part.sidebar .composite.title .title-label').first();
        if (await neutral.isVisible()) await neutral.click({ timeout: 5000 }).catch(() => undefined);
      }
    }
  }

  /** The visible quick input (input box, quick pick, simple file dialog). */
  quickInput(): Locator {
    return this.page.locator('.quick-input-widget:visible input.input');
  }

  /**
   * The visible quick input's value once `settled` holds for it, or its value after `timeoutMs` (for the caller's
   * assertion to show). A prompt that follows another in the same widget (a file dialog, then Import Conversation's
   * session id) is visible a moment before it holds its own value.
   */
  async settledInputValue(settled: (value: string) => boolean, timeoutMs = 10_000): Promise<string> {
    const input = this.quickInput();
    await input.waitFor();
    const deadline = Date.now() + timeoutMs;
    let value = await input.inputValue().catch(() => '');
    while (!settled(value) && Date.now() < deadline) {
      await this.page.waitForTimeout(100);
      value = await input.inputValue().catch(() => '');
    }
    return value;
  }

  /** Types into the open quick input and accepts. */
  async answer(text: string): Promise<void> {
    const input = this.quickInput();
    await input.waitFor();
    await input.fill(text);
    await this.page.keyboard.press('Enter');
  }

  /** Picks a file in the workbench's own file dialog (a quick input on remote and web workbenches). */
  async chooseFile(path: string): Promise<void> {
    const input = this.quickInput();
    await input.waitFor();
    const value = (): Promise<string> => input.inputValue().catch(() => '');
    const name = path.split('/').pop() as string;
    const listed = this.page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row', { hasText: name }).first();
    const widget = this.page.locator('.quick-input-widget:visible');
    for (let attempt = 1; ; attempt++) {
      // The dialog fills in its starting folder once it has read it, at times in two steps (a parent first); a path
      // typed before its last step is overwritten, so the path is typed again until it stays, listed, for 300 ms.
      await this.until(async () => (await value()).endsWith('/') || (await value()) === path, 'the file dialog to show its folder');
      await this.until(async () => {
        if ((await value()) !== path) await input.fill(path);
        if ((await value()) !== path || !(await listed.isVisible())) return false;
        await this.page.waitForTimeout(300);
        return (await value()) === path && (await listed.isVisible());
      }, `the file dialog to list ${name}`);
      await this.page.keyboard.press('Enter');
      // Accepted: the widget hides, or holds the command's next prompt (Import Conversation asks for the session id
      // in the same widget at once): a value that is not a path, or an empty input with no file list under it. A
      // folder in the input means the dialog was still settling and took the Enter as "go to this folder": again.
      const rows = this.page.locator('.quick-input-widget:visible .quick-input-list .monaco-list-row');
      let shown = path;
      const accepted = async (): Promise<boolean> => {
        if (!(await widget.isVisible())) return true;
        shown = await value();
        return shown === '' ? (await rows.count()) === 0 : !shown.startsWith('/');
      };
      await this.until(async () => (await accepted()) || shown.endsWith('/'), 'the file dialog to close', 30_000);
      if (!shown.endsWith('/') || (await accepted())) return;
      if (attempt === 3) throw new Error(`the file dialog did not take ${path}: it shows ${shown}`);
    }
  }

  /** Polls `check` every 100 ms until it holds, or fails after `timeoutMs` naming `what`. */
  private async until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await this.page.waitForTimeout(100);
    }
  }

  /** The validation message the quick input shows. */
  quickInputMessage(): Locator {
    return this.page.locator('.quick-input-widget:visible .quick-input-message');
  }

  /** A row of the sessions tree whose label is exactly `label`. */
  treeRow(label: string): TreeRow {
    const row = this.viewPane()
      .locator('.monaco-list-row')
      .filter({ has: this.page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(label)}$`) }) })
      .first();
    return new TreeRow(this, row);
  }

  /** The frame of the extension's webview content (inside the workbench's webview host iframe). */
  webview(): FrameLocator {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  }

  /** Frames of all webviews (for checks that nothing ran in them). */
  frames(): Frame[] {
    return this.page.frames();
  }

  /** Back to a neutral state: dialogs, menus and quick inputs closed, editors closed, toasts cleared. */
  async reset(): Promise<void> {
    await this.focusWorkbench();
    for (let i = 0; i < 3; i++) await this.page.keyboard.press('Escape');
    // A modal dialog left open by a test (confirmation, error) blocks every click: dismiss it.
    const dialog = this.page.locator('.monaco-dialog-box');
    for (let i = 0; i < 3 && (await dialog.isVisible()); i++) {
      const cancel = dialog.locator('.monaco-button', { hasText: /^(Cancel|OK|Close)$/ }).first();
      if (await cancel.isVisible()) await cancel.click();
      else await this.page.keyboard.press('Escape');
    }
    await this.runCommand('View: Close All Editors');
    await this.runCommand('Notifications: Clear All Notifications');
  }

  /** Console lines (from every frame, the webviews' included) that report a Content-Security-Policy violation. */
  cspViolations(): string[] {
    return this.console.filter((l) => /Content Security Policy|Refused to (apply|load|execute|connect|frame)/i.test(l));
  }

  /**
   * Saves a screenshot, the browser console, the code-server log and the extension hosts' logs (VS Code's own and each
   * output channel's, ours included: what the extension did, which the workbench's page does not show) under `dir`.
   */
  async saveArtifacts(dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    await this.page.screenshot({ path: join(dir, 'screenshot.png') }).catch(() => undefined);
    writeFileSync(join(dir, 'browser-console.log'), this.console.join('\n'));
    try {
      copyFileSync(this.server.logPath, join(dir, 'code-server.log'));
    } catch {
      /* no log */
    }
    const logs = join(this.server.stateDir, 'ud', 'logs');
    try {
      for (const name of readdirSync(logs, { recursive: true }) as string[]) {
        if (!/exthost/.test(name) || !name.endsWith('.log')) continue;
        const to = join(dir, 'exthost-logs', name);
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(join(logs, name), to);
      }
    } catch {
      /* no logs yet */
    }
  }

  async screenshot(path: string): Promise<void> {
    await this.page.screenshot({ path });
  }

  async close(options: { keepState?: boolean } = {}): Promise<void> {
    await this.browser.close().catch(() => undefined);
    await this.server.stop(options);
  }
}

export class TreeRow {
  constructor(
    private readonly wb: Workbench,
    readonly locator: Locator,
  ) {}

  async waitFor(timeout = 15_000): Promise<this> {
    await this.locator.waitFor({ timeout });
    return this;
  }

  /** Expands the row (no-op when already expanded with its children shown). */
  async expand(): Promise<this> {
    await this.clickUntilExpanded();
    // VS Code can show a node expanded with no children: when the node's parent is refreshed between the click and
    // the request for its children, the extension host no longer knows the node ("No tree item with id … found" in
    // its log) and the request fails. The tree refreshes only the database a change touched (sessionTree.ts), so
    // this needs a write to that file at that moment; a user collapses and expands it again, and so does this, once
    // (a node with no children costs the two waits).
    if (!(await this.hasChildRow(3000))) {
      await this.clickFor(false);
      await this.clickUntilExpanded();
      await this.hasChildRow(3000);
    }
    return this;
  }

  private async clickUntilExpanded(): Promise<void> {
    await this.waitFor();
    // A click that lands while the tree re-renders (the registry fires again once a database is open) is lost, so
    // click until the row says it is expanded.
    for (let attempt = 0; ; attempt++) {
      if ((await this.locator.getAttribute('aria-expanded')) === 'true') return;
      if (attempt === 5) throw new Error(`the tree row did not expand after ${attempt} clicks`);
      await this.clickFor(true);
    }
  }

  /** Clicks the row (which toggles it) and waits up to 2 s for it to say it is `expanded` (or not). */
  private async clickFor(expanded: boolean): Promise<void> {
    await this.locator.click();
    // Off the row at once: left on it, the row's hover tooltip opens below it, over its children, and takes the next
    // click on one of them (a right-click on a session waited 30 s under its database's tooltip).
    await this.wb.page.mouse.move(700, 2);
    await this.locator
      .and(this.wb.page.locator(`[aria-expanded="${expanded}"]`))
      .waitFor({ timeout: 2000 })
      .catch(() => undefined);
  }

  /** Whether the row below this one (in list order) is one of its children, within `timeout` ms. */
  private async hasChildRow(timeout: number): Promise<boolean> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const [index, level] = await this.locator.evaluate((el) => [
        Number(el.getAttribute('data-index')),
        Number(el.getAttribute('aria-level')),
      ]);
      const below = await this.wb
        .viewPane()
        .locator(`.monaco-list-row[data-index="${index! + 1}"]`)
        .evaluateAll((els) => els.map((el) => Number(el.getAttribute('aria-level'))));
      if (below.some((l) => l > level!)) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * The row labelled `label` inside this row's subtree (this row is expanded first). `treeRow('main')` takes the first
   * 'main' in the whole tree, which is another session's when two sessions are expanded; this one cannot.
   */
  async child(label: string): Promise<TreeRow> {
    await this.expand();
    const deadline = Date.now() + 15_000;
    for (;;) {
      // Monaco's list rows carry their position (data-index) and depth (aria-level); DOM order is not row order.
      const rows = await this.wb
        .viewPane()
        .locator('.monaco-list-row')
        .evaluateAll((els) =>
          els.map((el) => ({
            index: Number(el.getAttribute('data-index')),
            level: Number(el.getAttribute('aria-level')),
            label: el.querySelector('.label-name')?.textContent ?? '',
            expanded: el.getAttribute('aria-expanded') === 'true',
          })),
        );
      rows.sort((a, b) => a.index - b.index);
      const parent = await this.locator.evaluate((el) => ({
        index: Number(el.getAttribute('data-index')),
        level: Number(el.getAttribute('aria-level')),
      }));
      let found: number | undefined;
      for (const row of rows) {
        if (row.index <= parent.index) continue;
        if (row.level <= parent.level) break;
        if (row.level === parent.level + 1 && row.label === label) {
          found = row.index;
          break;
        }
      }
      if (found !== undefined) {
        const row = this.wb
          .viewPane()
          .locator(`.monaco-list-row[data-index="${found}"][aria-level="${parent.level + 1}"]`)
          .filter({ has: this.wb.page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(label)}$`) }) });
        return new TreeRow(this.wb, row);
      }
      if (Date.now() > deadline) throw new Error(`no row '${label}' under the expanded row`);
      await this.wb.page.waitForTimeout(100);
    }
  }

  async description(): Promise<string> {
    return (await this.locator.locator('.label-description').first().textContent()) ?? '';
  }

  /** Right-clicks the row and runs the context-menu entry `title`. */
  async contextMenu(title: string): Promise<void> {
    await this.waitFor();
    await this.wb.treeSettled();
    await this.locator.click({ button: 'right' });
    const menu = this.wb.page.locator('.context-view .monaco-menu');
    await menu.locator('.action-item', { hasText: title }).first().waitFor();
    // Mouse clicks on menu entries race the menu's opening animation; the keyboard is deterministic: move the
    // focus to the entry, then accept it.
    const entries = await menu.locator('.action-item:not(.disabled) .action-label').allTextContents();
    const index = entries.findIndex((t) => t.trim() === title);
    if (index < 0) throw new Error(`no context-menu entry '${title}' (entries: ${entries.join(', ')})`);
    for (let i = 0; i <= index; i++) await this.wb.page.keyboard.press('ArrowDown');
    await menu.locator('.action-item.focused', { hasText: title }).waitFor();
    await this.wb.page.keyboard.press('Enter');
    await menu.waitFor({ state: 'hidden' });
    // The row's hover tooltip would otherwise stay over whatever opens next.
    await this.wb.page.mouse.move(700, 2);
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The frame that holds an extension page: a webview host iframe's active content frame, the newest first; with
 * `matches`, the newest whose page it accepts (a comparison opens beside the conversation view, so two are visible).
 */
export async function viewFrame(wb: Workbench, timeout = 20_000, matches?: (frame: Frame) => Promise<boolean>): Promise<Frame> {
  const deadline = Date.now() + timeout;
  // The host iframe can be attached (and marked ready) a moment before its document is: its content frame is null
  // then, and a new webview may replace it while we look (Playwright then cannot adopt the element's handle into the
  // new document: "Unable to adopt element handle from a different document"). Look again until both frames are there.
  const contentOf = async (element: Locator): Promise<Frame | null> => {
    const handle = await element.elementHandle({ timeout: 1000 }).catch(() => null);
    return handle ? handle.contentFrame().catch(() => null) : null;
  };
  for (;;) {
    const hosts = wb.page.locator('iframe.webview.ready');
    await hosts.last().waitFor({ state: 'attached', timeout: Math.max(1, deadline - Date.now()) });
    let sawOuter = false;
    for (let i = (await hosts.count()) - 1; i >= 0; i--) {
      const outer = await contentOf(hosts.nth(i));
      if (outer) sawOuter = true;
      const inner = outer?.locator('iframe#active-frame');
      if (!inner) continue;
      await inner.waitFor({ state: 'attached', timeout: Math.max(1, Math.min(2000, deadline - Date.now())) }).catch(() => undefined);
      const frame = await contentOf(inner);
      if (!frame) continue;
      const ready = await frame
        .locator('#app')
        .waitFor({ state: 'attached', timeout: Math.max(1, Math.min(2000, deadline - Date.now())) })
        .then(() => true)
        .catch(() => false);
      if (ready && (!matches || (await matches(frame).catch(() => false)))) return frame;
    }
    if (Date.now() > deadline) throw new Error(sawOuter ? 'the view frame did not appear' : 'the webview host frame has no content');
    await wb.page.waitForTimeout(100);
  }
}

/** The conversation view of `session` in `db`: its page's title reads "<session> · <db>". */
export function conversationFrame(wb: Workbench, db: string, session: string, timeout = 20_000): Promise<Frame> {
  return viewFrame(
    wb,
    timeout,
    async (f) => ((await f.locator('h1.title').first().textContent({ timeout: 500 })) ?? '') === `${session} · ${db}`,
  );
}

/** Opens a session's conversation view from the sidebar tree and waits for its turn list. */
/** The compare view's frame whose heading is `title` ("Compare main ↔ retry"), once it is there. */
export function compareViewFrame(wb: Workbench, title: string, timeout = 20_000): Promise<Frame> {
  return viewFrame(
    wb,
    timeout,
    async (frame) =>
      (await frame.evaluate<string | null>("document.querySelector('h1.title')?.textContent ?? null").catch(() => null)) === title,
  );
}

export async function openConversationView(wb: Workbench, db: string, session: string): Promise<Frame> {
  await wb.openSidebar();
  await wb.treeRow(db).expand();
  await wb.treeRow(session).contextMenu('Open Conversation View');
  const frame = await conversationFrame(wb, db, session);
  await frame.locator('.turn-row').first().waitFor({ timeout: 20_000 });
  return frame;
}
