/**
 * The conversation view in the real workbench: branches of a fixture session, turn selection, branching from a
 * message, the token and tool tables against the store's own numbers, hostile message content, and a live update
 * from another process. Screenshots in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { RESULTS, ROOT, THEMES, useWorkbench, docsScreenshot } from './suite';
import type { Locator } from 'playwright-core';
import { conversationFrame, openConversationView, viewFrame } from './workbench';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'conformance');

/** Hostile content, and the plain text each must show as. */
const XSS_MESSAGES: [string, string][] = [
  ['<script>window.__xss = "script"</script> plain script tag', '<script>window.__xss = "script"</script> plain script tag'],
  [
    '<img src="x" onerror="window.__xss = \'img\'"> image with onerror',
    '<img src="x" onerror="window.__xss = \'img\'"> image with onerror',
  ],
  ['[click me](javascript:window.__xss="link") a javascript: link', '[click me](javascript:window.__xss="link") a javascript: link'],
  ['<style>body { display: none !important }</style> style injection', '<style>body { display: none !important }</style> style injection'],
  ['![remote](https://example.invalid/pixel.png) remote image', '[image: remote] remote image'],
  ['[a web link](https://example.invalid/page) asks first', 'a web link asks first'],
];

async function writeXssSession(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'hostile', dbPath: path, createTables: true });
  try {
    for (const text of XSS_MESSAGES) {
      await s.addItems([
        { role: 'user', content: text[0] },
        {
          type: 'function_call',
          name: '<b>tool</b>',
          callId: 'c',
          arguments: '{"html":"<script>window.__xss=\\"args\\"</script>"}',
          status: 'completed',
        },
        { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `Echo: ${text[0]}` }] },
      ] as never);
    }
  } finally {
    s.close();
  }
}

for (const theme of THEMES) {
  describe(`conversation view (${theme} theme)`, function () {
    let model: LoopbackOpenAI;
    const remote: string[] = [];

    before(async function () {
      model = await startLoopbackOpenAI({
        script: (req) => ({
          kind: 'text',
          text: `Streaming reply to: ${lastUserText(req.body)}`,
          chunks: ['Streaming ', 'reply ', 'to: ', lastUserText(req.body)],
          delayMs: 80,
        }),
      });
    });

    after(async function () {
      await model?.close();
    });

    const suite = useWorkbench({
      name: 'view',
      theme,
      prepare: async (workspace) => {
        copyFileSync(join(FIXTURES, 'ref-multisession.db'), join(workspace, 'conversations.db'));
        await writeXssSession(join(workspace, 'hostile.db'));
      },
      open: () => ({
        settings: {
          // A loopback model server: no API key is needed for a local server.
          'agentSessions.agent.baseUrl': model.baseUrl,
          'agentSessions.agent.model': 'loopback-model',
        },
      }),
    });

    before(function () {
      const { wb } = suite;
      wb.page.on('request', (r) => {
        const url = r.url();
        if (
          !url.startsWith(wb.server.url) &&
          !url.startsWith('data:') &&
          !url.startsWith('blob:') &&
          !/^https?:\/\/[^/]*\.vscode-cdn\.net/.test(url) &&
          !url.startsWith('vscode-')
        )
          remote.push(url);
      });
      wb.page.on('dialog', (d) => {
        remote.push(`dialog: ${d.message()}`);
        void d.dismiss();
      });
    });

    const shot = async (name: string): Promise<void> => {
      mkdirSync(join(RESULTS, 'screens'), { recursive: true });
      await suite.wb.screenshot(join(RESULTS, 'screens', `${name}-${theme}.png`));
    };

    it('shows the branches of a session with their fork points, and a turn’s items', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      const lanes = f.locator('.lane');
      await lanes.nth(1).waitFor();
      assert.deepEqual(await f.locator('.lane-name').allTextContents(), ['main', 'alt']);
      assert.match((await lanes.nth(1).textContent()) ?? '', /from main @ turn 2/);
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      assert.deepEqual(await f.locator('.item-title').allTextContents(), ['User', 'Assistant']);
      // A message's stored type is only in the tooltip: beside the buttons it would repeat the role.
      assert.equal(await f.locator('.item-user .item-title').getAttribute('title'), 'User (user)');
      assert.equal(await f.locator('.item-type').count(), 0);
      assert.match((await f.locator('.item-assistant .markdown').textContent()) ?? '', /The Little Prince/);
      // Keyboard: up moves to turn 1, right moves to the branch that forked after it.
      await f.locator('.turn-list').focus();
      await f.locator('.turn-list').press('ArrowUp');
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      await f.locator('.turn-list').press('ArrowRight');
      await f.locator('.lane.selected .lane-name', { hasText: 'alt' }).waitFor();
      await shot('10-conversation-view');
      // The README's first screenshot is this one, from the newest host in the light theme: kept current by this run.
      if (theme === 'light') await docsScreenshot(suite.wb, 'conversation-view');
    });

    it('branches from a selected user message, and the new branch appears selected and in the file', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane', { hasText: 'main' }).first().click();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.item-user .branch-here-button').click();
      const field = f.locator('vscode-text-field.branch-name');
      await field.locator('input').fill('alt');
      await f.locator('.validation', { hasText: 'already been used' }).waitFor();
      const name = `view-${theme}`;
      await field.locator('input').fill(name);
      await f.locator('vscode-button.branch-create').click();
      await f.locator('.lane.selected .lane-name', { hasText: name }).waitFor();
      const s = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: join(suite.workspace, 'conversations.db'), readonly: true });
      try {
        const branches = (await s.listBranches()).map((b) => b.branchId);
        assert.ok(branches.includes(name), `${name} in ${branches.join(', ')}`);
      } finally {
        s.close();
      }
      // The sidebar follows the same change.
      await suite.wb.openSidebar();
      await suite.wb.treeRow('conversations.db').expand();
      await suite.wb.treeRow('alice').expand();
      await suite.wb.treeRow(name).waitFor();
      await shot('11-branched-in-view');
    });

    it('shows token and tool tables that match the store', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'bob');
      await f.locator('vscode-panel-tab#tab-tokens').click();
      await f.locator('.usage-table vscode-data-grid-row').nth(1).waitFor();
      const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: join(suite.workspace, 'conversations.db'), readonly: true });
      try {
        const usage = await s.getSessionUsage('main');
        const totals = await f.locator('.usage-table .totals vscode-data-grid-cell').allTextContents();
        assert.ok(usage);
        assert.equal(totals[1], String(usage.requests));
        assert.equal(totals[4], usage.totalTokens.toLocaleString('en-US'));
        await f.locator('vscode-button[data-scope="session"]').click();
        await f.locator('.usage-table vscode-data-grid-cell', { hasText: 'Branch' }).waitFor();
        const all = await s.getSessionUsage();
        const sessionTotals = await f.locator('.usage-table .totals vscode-data-grid-cell').allTextContents();
        assert.equal(sessionTotals[5], all?.totalTokens.toLocaleString('en-US'));
      } finally {
        s.close();
      }
      await shot('12-token-table');
      await f.locator('vscode-panel-tab#tab-tools').click();
      await f.locator('.tool-table').waitFor();
      await shot('13-tool-table');
    });

    it('renders hostile message content as text: nothing runs, nothing loads', async () => {
      const f = await openConversationView(suite.wb, 'hostile.db', 'hostile');
      for (let turn = 1; turn <= XSS_MESSAGES.length; turn++) {
        await f.locator(`.turn-row[data-turn="${turn}"]`).click();
        await f.locator('.turn-title', { hasText: `Turn ${turn}` }).waitFor();
        const shown = (await f.locator('.item-user .markdown').textContent()) ?? '';
        assert.equal(shown.trim(), XSS_MESSAGES[turn - 1]![1], `turn ${turn} shows its text literally`);
        assert.match((await f.locator('.item-function_call .item-title').textContent()) ?? '', /^<b>tool<\/b>$/);
      }
      // A web link opens nothing by itself: the workbench asks first (and we decline).
      await f.locator(`.turn-row[data-turn="6"]`).click();
      await f.locator('.item-user .markdown a', { hasText: 'a web link' }).click();
      const dialog = suite.wb.page.locator('.monaco-dialog-box', { hasText: 'https://example.invalid/page' });
      await dialog.waitFor();
      await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
      await suite.wb.page.waitForTimeout(300);
      assert.equal(await f.evaluate(() => (globalThis as unknown as { __xss?: string }).__xss ?? null), null, 'no injected script ran');
      assert.equal(await f.locator('[onerror], [onclick], [onload]').count(), 0, 'no event-handler attribute from data');
      const scripts = await f
        .locator('script')
        .evaluateAll((list) => list.map((e) => (e.textContent ?? '') + (e.getAttribute('src') ?? '')));
      assert.ok(
        scripts.every((t) => !t.includes('__xss')),
        'no script element from data',
      );
      assert.equal(
        await f.locator('#app img, #app style, #app iframe, #app link, #app object').count(),
        0,
        'no image, style or frame element from data',
      );
      assert.equal(await f.locator('body').isVisible(), true, 'the style injection did not hide the page');
      assert.deepEqual(remote, [], 'no request left the machine and no dialog opened');
      await shot('14-hostile-content');
    });

    it('continues the branch from the composer, streaming the answer into the view', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'bob');
      await f.locator('.lane', { hasText: 'main' }).first().click();
      await f.locator('.turn-row[data-turn="1"]').waitFor();
      await f.locator('textarea.composer-input').fill(`Composer question (${theme})`);
      await f.locator('vscode-button.composer-send').click();
      await f.locator('.run-text', { hasText: 'Streaming reply' }).waitFor();
      await f.locator('.run-done').waitFor({ timeout: 20_000 });
      await f.locator('.turn-row .turn-preview', { hasText: `Composer question (${theme})` }).waitFor();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      assert.match(
        (await f.locator('.item-assistant .markdown').textContent()) ?? '',
        new RegExp(`Streaming reply to: Composer question \\(${theme}\\)`),
      );
      await shot('15-composer-run');
      // The run was traced into the extension's store, linked to the turn it wrote: its Timeline and its latency.
      await f.locator('.timeline-section > summary').click();
      await f.locator('.span-row[data-kind="model"]').first().waitFor({ timeout: 20_000 });
      assert.ok((await f.locator('.span-row[data-kind="agent"]').count()) >= 1, 'the run and its agent');
      await f.locator('.turn-row[data-turn="2"] .turn-latency').waitFor({ timeout: 20_000 });
      await suite.wb.page.mouse.move(5, 5);
      if (theme === 'light') await docsScreenshot(suite.wb, 'timeline-run');
      // The Timeline stays open for the next turn shown: closed again for the tests after this one.
      await f.locator('.timeline-section > summary').click();
      const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: join(suite.workspace, 'conversations.db'), readonly: true });
      try {
        assert.deepEqual(
          (await s.getTurnUsage(undefined, 'main')).map((u) => u.userTurnNumber),
          [1, 2],
        );
      } finally {
        s.close();
      }
    });

    it('restores the view after the window reloads', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane', { hasText: 'alt' }).first().click();
      await f.locator('.lane.selected .lane-name', { hasText: /^alt$/ }).waitFor();
      // Reload the way a user does: the workbench saves its editor state (and the view's setState) while shutting
      // down, which a bare page reload can outrun.
      // Listen before acting: a fast reload can fire `load` before a listener added afterwards exists.
      const reloaded = suite.wb.page.waitForEvent('load', { timeout: 60_000 });
      await suite.wb.runCommand('Developer: Reload Window');
      await reloaded;
      await suite.wb.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      const restored = await viewFrame(suite.wb, 60_000);
      await restored.locator('.turn-row').first().waitFor({ timeout: 30_000 });
      assert.match((await restored.locator('.title').textContent()) ?? '', /^alice · conversations\.db$/);
      await restored.locator('.lane.selected .lane-name', { hasText: /^alt$/ }).waitFor();
    });

    it('shows a turn another process appends while the view is open', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane', { hasText: 'main' }).first().click();
      await f.locator('.lane.selected .lane-name', { hasText: /^main$/ }).waitFor();
      await f.locator('.turn-row[data-turn="2"]').waitFor();
      const before = await f.locator('.turn-row').count();
      const store = join(ROOT, 'dist', 'store.js');
      const script = `const { AdvancedSQLiteSession } = require(${JSON.stringify(store)});
        (async () => { const s = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: ${JSON.stringify(join(suite.workspace, 'conversations.db'))} });
        await s.addItems([{ role: 'user', content: 'Written by another process (${theme})' }]); s.close(); })();`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      await f.locator('.turn-row .turn-preview', { hasText: `Written by another process (${theme})` }).waitFor({ timeout: 5000 });
      assert.equal(await f.locator('.turn-row').count(), before + 1);
    });

    /** Appends a user turn to alice's main branch from another process (the agent being debugged, writing). */
    function writeFromAnotherProcess(text: string): void {
      const store = join(ROOT, 'dist', 'store.js');
      const script = `const { AdvancedSQLiteSession } = require(${JSON.stringify(store)});
        (async () => { const s = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: ${JSON.stringify(join(suite.workspace, 'conversations.db'))} });
        await s.addItems([{ role: 'user', content: ${JSON.stringify(text)} }]); s.close(); })();`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    }

    it('keeps what the user types in Branch here while another process writes to the file', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane', { hasText: 'main' }).first().click();
      await f.locator('.lane.selected .lane-name', { hasText: /^main$/ }).waitFor();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      await f.locator('.branch-here-button').click();
      const field = f.locator('.branch-name input');
      await field.waitFor();
      // Offered the name the tree offers (`main-turn-2`, taken by nothing yet); the user types their own.
      assert.equal(await field.inputValue(), 'main-turn-2');
      await field.fill('short-');
      const rows = await f.locator('.turn-row').count();
      writeFromAnotherProcess(`Typed over (${theme})`);
      // The refresh has arrived (the new turn is listed) and the form is still the one the user is typing in.
      await f.locator('.turn-row .turn-preview', { hasText: `Typed over (${theme})` }).waitFor({ timeout: 5000 });
      assert.equal(await f.locator('.turn-row').count(), rows + 1);
      await field.pressSequentially('summary');
      assert.equal(await field.inputValue(), 'short-summary');
      await shot('11-branch-form-kept');
      // Cancelling draws what the refresh held back.
      await f.locator('.branch-form vscode-button', { hasText: 'Cancel' }).click();
      await f.locator('.branch-here-button').waitFor();
    });

    it('keeps text, caret and focus of every inline input while another process writes (issue 40, item 1)', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane', { hasText: 'main' }).first().click();
      await f.locator('.lane.selected .lane-name', { hasText: /^main$/ }).waitFor();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      let writes = 0;
      /**
       * Types `text` into `field`, puts the caret two characters from its end, and has another process append a turn;
       * once the refresh has drawn the list (and, unless a form holds it, the turn's detail) again, the field has the
       * text, the caret where it was, and the focus, and typing goes on at the caret.
       */
      const survivesWrite = async (field: Locator, text: string, detailRedrawn = true): Promise<void> => {
        await field.click();
        await field.fill(text);
        await field.press('ArrowLeft');
        await field.press('ArrowLeft');
        await f.locator('.turn-title').evaluate((e) => e.setAttribute('data-before-write', ''));
        const written = `Live write ${++writes} (${theme})`;
        writeFromAnotherProcess(written);
        await f.locator('.turn-row .turn-preview', { hasText: written }).waitFor({ timeout: 5000 });
        if (detailRedrawn) await f.locator('.turn-title:not([data-before-write])', { hasText: 'Turn 2' }).waitFor({ timeout: 5000 });
        // The refresh may draw in more than one step (the detail, then what its parts ask for): the state is read until
        // the field has the focus again, for at most 3 s, and asserted as it is then.
        const read = (): Promise<[string, number | null, number | null, boolean, string]> =>
          field.evaluate((e) => {
            // An <input> or <textarea> (the root tsconfig has no DOM types).
            const input = e as unknown as {
              value: string;
              selectionStart: number | null;
              selectionEnd: number | null;
              ownerDocument: { activeElement: { tagName?: string; className?: string } | null; hasFocus(): boolean };
            };
            const active = input.ownerDocument.activeElement;
            const where = `focus on ${active?.tagName ?? 'nothing'}.${String(active?.className ?? '')}, frame focused: ${input.ownerDocument.hasFocus()}`;
            return [input.value, input.selectionStart, input.selectionEnd, input === active, where] as [
              string,
              number | null,
              number | null,
              boolean,
              string,
            ];
          });
        let state = await read();
        for (let waited = 0; !state[3] && waited < 3000; waited += 100) {
          await suite.wb.page.waitForTimeout(100);
          state = await read();
        }
        const [value, start, end, focused, where] = state;
        const kept = [value, start, end, focused];
        const caret = text.length - 2;
        assert.deepEqual(kept, [text, caret, caret, true], `${text}: text, caret and focus after the write (${where})`);
        await field.pressSequentially('X');
        assert.equal(await field.inputValue(), `${text.slice(0, caret)}X${text.slice(caret)}`);
      };
      const bar = f.locator('.review-bar');
      await survivesWrite(bar.locator('.review-note'), 'A note being written');
      await survivesWrite(bar.locator('.review-new-tag'), 'half-a-tag');
      await bar.locator('.review-new-tag').fill('');
      await shot('12-review-note-kept');
      // The correction form holds the detail's redraws while it is open: the text stays in the same field.
      await f.locator('.correct-button').last().click();
      await survivesWrite(f.locator('.correction-input'), 'The answer it should have given', false);
      await f.locator('.correction-cancel').click();
      await f.locator('.correct-button').last().waitFor();
      // The note typed before is still there after all of it, unsaved.
      assert.equal(await bar.locator('.review-note').inputValue(), 'A note being writtXen');
      await bar.locator('.review-note').fill('');
      await survivesWrite(f.locator('.composer-input'), 'A message not sent yet');
      await f.locator('.composer-input').fill('');
      await f.locator('h1.title').click();
      await suite.wb.page.keyboard.press('Control+f');
      await survivesWrite(f.locator('.search-input'), 'Little Prince');
      await f.locator('.search-input').press('Escape');
    });

    it('reveals the asked turn when the view waits in a background tab', async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'conversations.db', 'alice');
      await f.locator('.lane', { hasText: 'main' }).first().click();
      await f.locator('.lane.selected .lane-name', { hasText: /^main$/ }).waitFor();
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      // Another editor in front (another session's view): the view's page is put away until its tab comes back.
      await openConversationView(wb, 'hostile.db', 'hostile');
      await wb.page.locator('.tab.active', { hasText: 'hostile' }).waitFor();
      await wb.treeRow('alice').expand();
      await wb.treeRow('main').expand();
      await wb.treeRow('Turn 2').contextMenu('Reveal in Conversation View');
      const shown = await conversationFrame(wb, 'conversations.db', 'alice');
      await shown.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      await shown.locator('.turn-row.selected[data-turn="2"]').waitFor();
    });

    it('logs no Content-Security-Policy violation in any frame', () => {
      // Runs last: every view above (branches, tables, hostile content, composer, reload) had its chance to trip it.
      assert.deepEqual(suite.wb.cspViolations(), []);
    });
  });
}
