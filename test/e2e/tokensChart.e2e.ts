/**
 * The Tokens tab of the demo session in the real workbench: the tokens-per-turn chart (one bar per row of the page,
 * reachable with the keyboard, a tooltip with counts and cost), the Cost column and total at the pricing model, and
 * the Tools tab's own scope. Screenshots for the docs in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Frame } from 'playwright-core';
import { writeDemoDatabase } from '../../scripts/demo';
import { Workbench, viewFrame } from './workbench';

const ROOT = resolve(__dirname, '..', '..');
const VSIX = join(ROOT, 'dist', 'agent-session-inspector.vsix');
const RESULTS = join(ROOT, 'test-results');

/** The data rows of the Tokens table (not its header or totals). */
const DATA_ROWS = '.usage-table vscode-data-grid-row:not(.header-row):not(.totals)';

for (const theme of ['light', 'dark'] as const) {
  describe(`tokens chart and costs (${theme} theme)`, function () {
    let wb: Workbench;
    let workspace: string;

    before(async function () {
      if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first.`);
      workspace = mkdtempSync(join(tmpdir(), `asi-e2e-chart-${theme}-`));
      await writeDemoDatabase(join(workspace, 'conversations.db'));
      wb = await Workbench.open({
        folder: workspace,
        installVsix: [VSIX],
        settings: {
          'workbench.colorTheme': theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern',
          // The default pricing model of every session.
          'agentSessions.agent.model': 'gpt-4.1-mini',
        },
      });
    });

    afterEach(async function () {
      if (this.currentTest?.state === 'failed') {
        const dir = join(RESULTS, 'failures', `chart-${theme}-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
        await wb?.saveArtifacts(dir);
        console.log(`      artifacts: ${dir}`);
      }
      await wb?.reset().catch(() => undefined);
    });

    after(async function () {
      await wb?.close();
      if (workspace) rmSync(workspace, { recursive: true, force: true });
    });

    async function openTokens(): Promise<Frame> {
      await wb.openSidebar();
      await wb.treeRow('conversations.db').expand();
      await wb.treeRow('weather-trip').contextMenu('Open Conversation View');
      const f = await viewFrame(wb);
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
      await wb.page.mouse.move(5, 5);
      mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true });
      await wb.screenshot(join(ROOT, 'docs', 'images', `tokens-chart-${theme}.png`));

      // The whole session: bars of every branch.
      await f.locator('vscode-button[data-scope="session"]').click();
      await f.locator('.chart-caption', { hasText: 'branches' }).waitFor();
      assert.equal(await f.locator('.token-chart .chart-bar').count(), await f.locator(DATA_ROWS).count());
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
