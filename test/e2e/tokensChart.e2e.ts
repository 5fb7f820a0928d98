/**
 * The Tokens tab of the demo session in the real workbench: the tokens-per-turn chart (one bar per row of the page,
 * reachable with the keyboard, a tooltip with counts and cost), the Cost column and total at the pricing model, and
 * the Tools tab's own scope. Screenshots for the docs in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { writeDemoDatabase } from '../../scripts/demo';
import { RESULTS, THEMES, useWorkbench, docsScreenshot } from './suite';
import { viewFrame } from './workbench';

/** The data rows of the Tokens table (not its header or totals). */
const DATA_ROWS = '.usage-table vscode-data-grid-row:not(.header-row):not(.totals)';

for (const theme of THEMES) {
  describe(`tokens chart and costs (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'chart',
      theme,
      prepare: (workspace) => writeDemoDatabase(join(workspace, 'conversations.db')),
      // The default pricing model of every session.
      open: { settings: { 'agentSessions.agent.model': 'gpt-4.1-mini' } },
    });

    async function openTokens(): Promise<Frame> {
      await suite.wb.openSidebar();
      await suite.wb.treeRow('conversations.db').expand();
      await suite.wb.treeRow('weather-trip').contextMenu('Open Conversation View');
      const f = await viewFrame(suite.wb);
      await f.locator('.turn-row').first().waitFor({ timeout: 20_000 });
      await f.locator('vscode-panel-tab#tab-tokens').click();
      await f.locator('.token-chart .chart-bar').first().waitFor();
      return f;
    }

    it('charts one bar per row of the Tokens table, with costs at the pricing model', async () => {
      const f = await openTokens();
      const rows = await f.locator(DATA_ROWS).count();
      assert.ok(rows >= 4, `${rows} rows`);
      assert.equal(await f.locator('.token-chart .chart-bar').count(), rows, 'one bar group per row');
      assert.match((await f.locator('.chart-caption').textContent()) ?? '', /turns 1–\d+/);
      assert.match((await f.locator('.pricing-header').textContent()) ?? '', /Costs at gpt-4\.1-mini prices of \d{4}-\d{2}-\d{2}/);
      // The Cost column: the header, a "$" value in every row and in the totals.
      const header = await f.locator('.usage-table .header-row vscode-data-grid-cell').allTextContents();
      assert.equal(header[header.length - 1], 'Cost');
      for (let i = 0; i < rows; i++) {
        const cells = await f.locator(DATA_ROWS).nth(i).locator('vscode-data-grid-cell').allTextContents();
        assert.match(cells[cells.length - 1] ?? '', /^<?\$\d/, `row ${i + 1}: ${cells.join(' | ')}`);
      }
      const totals = await f.locator('.usage-table .totals vscode-data-grid-cell').allTextContents();
      assert.match(totals[totals.length - 1] ?? '', /^<?\$\d/);
      // Each bar's tooltip gives its counts and cost; the bars are one Tab stop, walked with the arrow keys.
      assert.match(
        (await f.locator('.chart-bar').first().locator('title').textContent()) ?? '',
        /^Turn 1: [\d,]+ input \([\d,]+ cached\), [\d,]+ output \([\d,]+ reasoning\); cost <?\$\d/,
      );
      await f.locator('.chart-bar').first().focus();
      await f.locator('.chart-bar').first().press('ArrowRight');
      assert.equal(await f.locator('.chart-bar:focus').getAttribute('data-turn'), '2');
      await f.locator('.chart-bar[data-turn="2"]').press('End');
      assert.equal(await f.locator('.chart-bar:focus').getAttribute('data-turn'), String(rows));
      // The chart shows the same page in turn order, whatever order the table is sorted in.
      await f.locator('.usage-table .header-row vscode-data-grid-cell', { hasText: 'Total' }).first().click();
      await f.locator('.usage-table .header-row vscode-data-grid-cell[aria-sort="ascending"]', { hasText: 'Total' }).waitFor();
      const turns = await f.locator('.chart-bar').evaluateAll((bars) => bars.map((b) => Number(b.getAttribute('data-turn'))));
      assert.deepEqual(
        turns,
        [...turns].sort((a, b) => a - b),
      );
      await f.locator('.usage-table .header-row vscode-data-grid-cell', { hasText: 'Turn' }).first().click();
      await f.locator('.usage-table .header-row vscode-data-grid-cell[aria-sort="ascending"]', { hasText: 'Turn' }).waitFor();
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `tokens-chart-${theme}`);

      // The whole session: bars of every branch.
      await f.locator('vscode-button[data-scope="session"]').click();
      await f.locator('.chart-caption', { hasText: 'branches' }).waitFor();
      assert.equal(await f.locator('.token-chart .chart-bar').count(), await f.locator(DATA_ROWS).count());
    });

    /** Cells (of `table`) whose text runs over more than one line: a wrapped figure or name. */
    const wrappedCells = (f: Frame, table: string): Promise<string[]> =>
      f.evaluate(`[...document.querySelectorAll('${table} vscode-data-grid-cell')].flatMap((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        return tops.size > 1 ? [cell.textContent] : [];
      })`) as Promise<string[]>;

    it('fits every figure and name on one line, at 1400 px and at 500 px', async () => {
      const f = await openTokens();
      const check = async (width: number): Promise<void> => {
        await f.locator('vscode-button[data-scope="session"]').click();
        await f.locator('.chart-caption', { hasText: 'branches' }).waitFor();
        assert.deepEqual(await wrappedCells(f, '.usage-table'), [], `Tokens table at ${width} px`);
        // The whole session's bars stand by branch, under its name.
        assert.ok((await f.locator('.chart-branch').count()) >= 2, 'a branch label per run of bars');
        await f.locator('vscode-panel-tab#tab-tools').click();
        await f.locator('vscode-button[data-tool-scope="session"]').click();
        await f.locator('.scope-label', { hasText: 'whole session' }).waitFor();
        await f.locator('.tool-table').waitFor();
        assert.deepEqual(await wrappedCells(f, '.tool-table'), [], `Tools table at ${width} px`);
        assert.match((await f.locator('.tool-table').textContent()) ?? '', /main \d/, 'the turns name their branch');
        await f.locator('vscode-panel-tab#tab-tokens').click();
      };
      await check(1400);
      await suite.wb.runCommand('View: Close Primary Side Bar');
      await suite.wb.page.setViewportSize({ width: 550, height: 900 });
      try {
        await check(500);
        await suite.wb.screenshot(join(RESULTS, 'screens', `tables-500px-${theme}.png`));
      } finally {
        await suite.wb.page.setViewportSize({ width: 1400, height: 900 });
      }
    });

    it('gives the Tools tab its own scope and says which it shows', async () => {
      const f = await openTokens();
      await f.locator('vscode-button[data-scope="session"]').click();
      await f.locator('.chart-caption', { hasText: 'branches' }).waitFor();
      await f.locator('vscode-panel-tab#tab-tools').click();
      // Not the Tokens tab's scope: its own, from this branch.
      await f.locator('.scope-label', { hasText: 'Tools called on branch main' }).waitFor();
      await f.locator('.tool-table').waitFor();
      await f.locator('vscode-button[data-tool-scope="session"]').click();
      await f.locator('.scope-label', { hasText: 'whole session' }).waitFor();
    });
  });
}
