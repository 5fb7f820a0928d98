/**
 * The conversation view's reading fixes in the real workbench, on a session with every built-in tool type
 * (test/support/builtinToolItems.ts, Python-shaped items): calls and outputs paired by call id with the tool name on
 * both, a renderer per tool type, images from data URLs; and the layout at 1600 px (three columns) and at 500 px
 * (stacked, no horizontal scrollbar). Screenshots for the docs in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { AdvancedSQLiteSession } from '../../src/store';
import { writeBuiltinToolSession } from '../support/builtinToolItems';
import { THEMES, useWorkbench, docsScreenshot } from './suite';
import { viewFrame } from './workbench';

const LONG_BRANCH = 'a-branch-with-a-very-long-name-that-must-not-run-under-the-turn-list';

/** The renderer of each built-in tool type, and a text it must show (its key field). */
const RENDERERS: [turn: number, selector: string, text: RegExp][] = [
  [2, '.item-computer_call .tool-fields', /click \(120, 340\) left/],
  [3, '.item-file_search_call .tool-fields', /refund policy[\s\S]*policy\.md \(score 0\.92\)/],
  [3, '.item-web_search_call .tool-fields', /weather in Paris[\s\S]*meteo\.example/],
  [4, '.item-code_interpreter_call .tool-fields', /print\(6 \* 7\)[\s\S]*42/],
  [5, '.item-mcp_list_tools .tool-fields', /deepwiki[\s\S]*ask_question — Ask about a repository/],
  [5, '.item-mcp_call .tool-fields', /deepwiki[\s\S]*ask_question[\s\S]*It is a session store\./],
  [5, '.item-mcp_approval_request .tool-fields', /delete_repo/],
  [5, '.item-mcp_approval_response .tool-fields', /denied[\s\S]*Not allowed/],
  [6, '.item-local_shell_call .tool-fields', /ls -la/],
  [6, '.item-local_shell_call_output .tool-fields', /total 0/],
  [6, '.item-shell_call .tool-fields', /git status/],
  [6, '.item-shell_call_output .tool-fields', /clean[\s\S]*exit code 0/],
  [6, '.item-apply_patch_call .tool-fields', /update_file src\/a\.ts[\s\S]*const a = 2/],
  [6, '.item-apply_patch_call_output .tool-fields', /completed[\s\S]*Updated src\/a\.ts/],
];

for (const theme of THEMES) {
  describe(`tool renderers and narrow layout (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'tools',
      theme,
      prepare: async (workspace) => {
        const db = join(workspace, 'tools.db');
        await writeBuiltinToolSession(db);
        const s = new AdvancedSQLiteSession({ sessionId: 'tools', dbPath: db });
        try {
          await s.createBranchFromTurn(2, LONG_BRANCH);
          await s.switchToBranch('main');
        } finally {
          s.close();
        }
      },
      // No key anywhere (the composer test needs a run that fails for want of one).
      open: { env: { OPENAI_API_KEY: '' } },
    });

    afterEach(async function () {
      await suite.wb.page.setViewportSize({ width: 1400, height: 900 });
    });

    async function openView(): Promise<Frame> {
      await suite.wb.openSidebar();
      await suite.wb.treeRow('tools.db').expand();
      await suite.wb.treeRow('tools').contextMenu('Open Conversation View');
      const f = await viewFrame(suite.wb);
      await f.locator('.turn-row').first().waitFor({ timeout: 20_000 });
      return f;
    }

    async function showTurn(f: Frame, turn: number): Promise<void> {
      await f.locator(`.turn-row[data-turn="${turn}"]`).click();
      await f.locator('.turn-title', { hasText: `Turn ${turn}` }).waitFor();
      await f.locator('.items').waitFor();
    }

    it('pairs calls with their outputs by call id and renders each built-in tool type', async () => {
      await suite.wb.page.setViewportSize({ width: 1600, height: 1000 });
      const f = await openView();
      // The structured user message of turn 1 is text in the list, not JSON.
      assert.equal(
        await f.locator('.turn-row[data-turn="1"] .turn-preview').textContent(),
        'What is the weather in Paris, and what time is it?',
      );

      await showTurn(f, 1);
      // Three calls, each one card with its output: Python's call_id, the JS SDK's callId, an image output.
      const pairs = f.locator('.item-pair');
      assert.equal(await pairs.count(), 3);
      // The tool name on both halves' titles, also on Python's output, which stores none.
      const names: string[][] = [];
      for (let i = 0; i < 3; i++) names.push(await pairs.nth(i).locator('.item-title').allTextContents());
      assert.deepEqual(names, [
        ['get_weather', 'get_weather result'],
        ['get_time', 'get_time result'],
        ['render_chart', 'render_chart result'],
      ]);
      // The stored types stay visible, small, for people debugging the format.
      assert.deepEqual(await pairs.nth(0).locator('.item-type').allTextContents(), ['function_call', 'function_call_output']);
      // The turn list names built-in tools as people do; the stored name is in the badge's tooltip.
      const webSearch = f.locator('.turn-row[data-turn="3"] .tool-badge', { hasText: 'web search' });
      assert.equal(await webSearch.getAttribute('title'), 'web search (web_search_call)');
      assert.equal(await f.locator('.turn-row .tool-badge', { hasText: /_call$/ }).count(), 0, 'no raw built-in type on a badge');
      // The image output renders as an image, from its data URL.
      const img = pairs.nth(2).locator('img.tool-image');
      await img.waitFor();
      assert.match((await img.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
      // Decoded (a data URL the CSP let through), not a broken image.
      await f
        .locator('img.tool-image')
        .evaluateAll((imgs) => Promise.all(imgs.map((i) => (i as unknown as { decode(): Promise<void> }).decode())));
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `wide-view-${theme}`);

      // The screenshot output shows the image, not its data URL as text.
      await showTurn(f, 2);
      const computer = f.locator('.item-pair');
      assert.equal(await computer.count(), 1);
      assert.deepEqual(await computer.locator('.item-title').allTextContents(), ['computer', 'computer result']);
      assert.deepEqual(await computer.locator('.item-type').allTextContents(), ['computer_call', 'computer_call_output']);
      await computer.locator('img.tool-image').waitFor();
      assert.doesNotMatch((await computer.textContent()) ?? '', /data:image/);

      for (const [turn, selector, text] of RENDERERS) {
        if (!(await f.locator('.turn-title', { hasText: `Turn ${turn}` }).count())) await showTurn(f, turn);
        const block = f.locator(selector);
        await block.first().waitFor();
        assert.match((await block.first().textContent()) ?? '', text, selector);
      }
      // Image generation: the image.
      await showTurn(f, 4);
      await f.locator('.item-image_generation_call img.tool-image').waitFor();
      await showTurn(f, 6);
      // Custom tools: the input and the output, one pair.
      const custom = f.locator('.item-pair', { has: f.locator('.item-custom_tool_call') });
      assert.match((await custom.textContent()) ?? '', /Their going home\.[\s\S]*They’re going home\./);
      // Copy goes through the host and says so.
      await f.locator('.item-custom_tool_call_output .copy-output').click();
      await f.locator('.item-custom_tool_call_output .copy-status', { hasText: 'Copied' }).waitFor();
      // Raw JSON stays one click away.
      await f.locator('.item-shell_call .raw-toggle').click();
      await f.locator('.item-shell_call pre.raw').waitFor();
      await f.locator('.item-shell_call .raw-toggle').click();
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `tool-renderers-${theme}`);
      await showTurn(f, 5);
      await docsScreenshot(suite.wb, `tool-renderers-mcp-${theme}`);
      // The Tools tab names built-in tools as the turn list does.
      await f.locator('vscode-panel-tab#tab-tools').click();
      await f.locator('.tool-table', { hasText: 'web search' }).waitFor();
      assert.doesNotMatch((await f.locator('.tool-table').textContent()) ?? '', /web_search_call|computer_call/);
    });

    it('stacks at 500 px with no horizontal scrollbar, long names cut with a tooltip', async () => {
      const f = await openView();
      await suite.wb.runCommand('View: Close Primary Side Bar');
      // The activity bar takes ~50 px: the view itself is about 500 px wide.
      await suite.wb.page.setViewportSize({ width: 550, height: 1000 });
      await f.locator('.lane', { hasText: LONG_BRANCH }).click();
      await f.locator('.turn-list-branch', { hasText: LONG_BRANCH }).waitFor();
      // Forked before turn 2: turn 1 (shared with main) is the branch's only turn.
      await showTurn(f, 1);
      const width = Number(await f.evaluate('document.documentElement.clientWidth'));
      assert.ok(width <= 520, `the view is ${width} px wide`);
      // Stacked: the branch map, the turn list and the turn one above the other.
      const tops = (await f.evaluate(
        `['.map-slot', '.turn-column', '.detail-column'].map((s) => Math.round(document.querySelector(s).getBoundingClientRect().top))`,
      )) as number[];
      assert.ok(tops[0]! < tops[1]! && tops[1]! < tops[2]!, `tops ${tops.join(', ')}`);
      // No horizontal page scrollbar.
      const overflow = (await f.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as number[];
      assert.ok(overflow[0]! <= overflow[1]!, `scrollWidth ${overflow[0]} > clientWidth ${overflow[1]}`);
      // Long branch names: cut with an ellipsis inside their column, the whole name in the tooltip.
      const heading = f.locator('.turn-list-branch');
      assert.equal(await heading.getAttribute('title'), LONG_BRANCH);
      // The graph's lane keeps the name's end (siblings differ there) and cuts its middle.
      const cut = (await f.evaluate(
        `[...document.querySelectorAll('.turn-list-branch, .lane.selected .lane-name-head')].map((e) => e.scrollWidth > e.clientWidth && e.getBoundingClientRect().right <= document.documentElement.clientWidth)`,
      )) as boolean[];
      assert.deepEqual(cut, [true, true], 'both ellipsized inside the view');
      const tail = f.locator('.lane.selected .lane-name-tail');
      assert.equal(await tail.textContent(), LONG_BRANCH.slice(-8));
      const tailBox = await tail.boundingBox();
      assert.ok(tailBox && tailBox.x + tailBox.width <= 550, 'the end of the name is in view (the page is 550 px wide)');
      // The items' stored types give way (they are in the titles' tooltips).
      const types = (await f.evaluate(`[...document.querySelectorAll('.item-type')].map((e) => getComputedStyle(e).display)`)) as string[];
      assert.ok(types.length > 0 && types.every((d) => d === 'none'), `stored types shown: ${types.join(', ')}`);
      assert.match((await f.locator('.item-title').last().getAttribute('title')) ?? '', /\(\w+\)$/);
      // The row's tool badges that do not fit end in "+N", the hidden names in its tooltip.
      const more = f.locator('.turn-row[data-turn="1"] .more-badge');
      await more.waitFor();
      assert.match((await more.textContent()) ?? '', /^\+[1-3]$/);
      assert.match((await more.getAttribute('title')) ?? '', /get_|render_chart/);
      // The selected lane stays inside its column.
      const lane = (await f.evaluate(
        `(() => { const l = document.querySelector('.lane.selected'); const g = l.closest('.branch-graph'); return [l.getBoundingClientRect().right, g.getBoundingClientRect().right]; })()`,
      )) as number[];
      assert.ok(lane[0]! <= lane[1]! + 0.5, `lane right ${lane[0]} > column right ${lane[1]}`);
      // The composer is reachable: below the turn, inside the page's width.
      const composer = f.locator('.composer-input');
      await composer.scrollIntoViewIfNeeded();
      assert.ok(await composer.isVisible());
      // Delete is in the "…" menu, not beside Switch.
      assert.equal(await f.locator('.actions > .delete-branch').count(), 0);
      await f.locator('.more-button').click();
      await f.locator('.more-menu .delete-branch').waitFor();
      await f.locator('.more-menu .delete-branch').press('Escape');
      assert.ok(await f.locator('.more-menu').isHidden());
      await f.locator('.turn-title').click();
      await f.evaluate('window.scrollTo(0, 0)');
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `narrow-view-${theme}`);

      // The Tokens table is wider than the view: it scrolls inside its own box, the page does not.
      await f.locator('vscode-panel-tab#tab-tokens').click();
      await f.locator('.usage-table .grid-scroll').waitFor();
      const table = (await f.evaluate(
        `(() => { const b = document.querySelector('.usage-table .grid-scroll'); return [b.scrollWidth, b.clientWidth, document.documentElement.scrollWidth, document.documentElement.clientWidth]; })()`,
      )) as number[];
      assert.ok(table[0]! > table[1]!, `the table (${table[0]} px) is wider than its box (${table[1]} px)`);
      assert.ok(table[2]! <= table[3]!, `page scrollWidth ${table[2]} > clientWidth ${table[3]}`);
      await f.locator('vscode-panel-tab#tab-conversation').click();
    });

    it('keeps the draft after a run that failed for want of an API key, with no stale status, and offers Set API Key', async () => {
      const f = await openView();
      const draft = 'Will this survive a failed run?';
      await f.locator('.composer-input').fill(draft);
      await f.locator('.composer-send').click();
      // No key in the workbench's environment, no server configured: the run fails before it starts.
      await f.locator('.run-log .run-error', { hasText: 'No API key is set' }).waitFor();
      assert.equal(await f.locator('.run-log .run-status').count(), 0, 'no "… is answering" line for a run that never started');
      assert.equal(await f.locator('.composer-input').inputValue(), draft, 'the draft is kept');
      await f.locator('.run-log .set-api-key').click();
      // The host's Set API Key command asks for the key.
      await suite.wb.page.locator('.quick-input-widget', { hasText: 'API key' }).waitFor();
      await suite.wb.page.keyboard.press('Escape');
    });

    it('logs no Content-Security-Policy violation in any frame', () => {
      assert.deepEqual(suite.wb.cspViolations(), []);
    });
  });
}
