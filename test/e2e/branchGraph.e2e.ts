/**
 * The branch map as a git graph in the real workbench, on a session with nested forks written through the store:
 * lanes and fork lines in the SVG, the rows' keyboard moves, the turn list's divider where the shown branch leaves
 * its parent, and shared turns labelled with (and showing the usage of) the branch that ran them, a grandparent
 * included. Screenshots docs/images/branch-graph-light.png and -dark.png.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { THEMES, useWorkbench, docsScreenshot } from './suite';
import { openConversationView } from './workbench';

const usage = (total: number) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: total - 10,
      outputTokens: 10,
      totalTokens: total,
      inputTokensDetails: [{ cached_tokens: 0 }],
      outputTokensDetails: [{ reasoning_tokens: 0 }],
    },
  },
});

/**
 * main: 6 turns (usage 100 × turn); retry: from main @ 3 with 3 own turns (1000 × turn); deeper: from retry @ 5, so
 * turns 1–2 are main's and 3–4 retry's, with 2 own turns; last: from main @ 6 (main's last turn); fresh: from turn 1
 * (shares nothing).
 */
async function writeNestedForks(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'nested', dbPath: path, createTables: true });
  const turn = async (text: string, total: number): Promise<void> => {
    await s.addItems([
      { role: 'user', content: text },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `Answer to ${text}` }] },
    ] as never);
    await s.storeRunUsage(usage(total));
  };
  try {
    for (let t = 1; t <= 6; t++) await turn(`main question ${t}`, 100 * t);
    await s.createBranchFromTurn(3, 'retry');
    for (let t = 3; t <= 5; t++) await turn(`retry question ${t}`, 1000 * t);
    await s.createBranchFromTurn(5, 'deeper');
    for (let t = 5; t <= 6; t++) await turn(`deeper question ${t}`, 10_000 * t);
    await s.switchToBranch('main');
    await s.createBranchFromTurn(6, 'last');
    await turn('last question 6', 7);
    await s.switchToBranch('main');
    await s.createBranchFromTurn(1, 'fresh');
    await turn('fresh question 1', 9);
    await s.switchToBranch('main');
  } finally {
    s.close();
  }
}

/** main of 20 turns and 60 branches forked from it (three per fork turn), each with one turn of its own. */
async function writeManyBranches(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'many', dbPath: path, createTables: true });
  try {
    for (let t = 1; t <= 20; t++) await s.addItems([{ role: 'user', content: `main ${t}` }]);
    for (let i = 0; i < 60; i++) {
      await s.switchToBranch('main');
      await s.createBranchFromTurn(1 + (i % 20), `try-${String(i).padStart(2, '0')}`);
      await s.addItems([{ role: 'user', content: `try ${i}` }]);
    }
    await s.switchToBranch('main');
  } finally {
    s.close();
  }
}

for (const theme of THEMES) {
  describe(`branch graph (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'graph',
      theme,
      prepare: async (workspace) => {
        await writeNestedForks(join(workspace, 'forks.db'));
        await writeManyBranches(join(workspace, 'many.db'));
      },
    });

    it('draws a lane per level of forking, with a fork line from each parent lane to its child', async () => {
      const f = await openConversationView(suite.wb, 'forks.db', 'nested');
      await f.locator('.graph-lines').waitFor();
      assert.deepEqual(await f.locator('.graph-rows .lane-name').allTextContents(), ['main', 'retry', 'deeper', 'last', 'fresh']);
      const forks = await f
        .locator('.graph-lines path.graph-fork')
        .evaluateAll((paths) => paths.map((p) => `${p.getAttribute('data-parent')}→${p.getAttribute('data-child')}`));
      // fresh shares no turn with any branch, so where it came from cannot be told: a root of its own, no fork line.
      assert.deepEqual(forks, ['main→retry', 'retry→deeper', 'main→last']);
      assert.equal(await f.locator('.graph-lines line.graph-lane').count(), 5);
      const cx = async (branch: string): Promise<number> =>
        Number(await f.locator(`.graph-lines circle[data-branch="${branch}"]`).getAttribute('cx'));
      const [main, retry, deeper, last, fresh] = [
        await cx('main'),
        await cx('retry'),
        await cx('deeper'),
        await cx('last'),
        await cx('fresh'),
      ];
      assert.ok(main < retry && retry < deeper, `lanes left to right: main ${main}, retry ${retry}, deeper ${deeper}`);
      assert.equal(last, retry, 'forks of main share the second lane');
      assert.equal(fresh, main, 'a root takes the first lane');
      assert.match((await f.locator('.lane[data-branch="deeper"] .lane-meta').textContent()) ?? '', /from retry @ turn 5/);
      assert.match((await f.locator('.lane[data-branch="last"] .lane-meta').textContent()) ?? '', /from main @ turn 6/);
      // The current branch (main) and the shown one are marked on the graph.
      await f.locator('.graph-lines circle.current[data-branch="main"]').waitFor({ state: 'attached' });
      await f.locator('.graph-lines circle.shown[data-branch="main"]').waitFor({ state: 'attached' });
    });

    it('labels shared turns with the branch that ran them, with its usage, and marks where the branch leaves', async () => {
      const f = await openConversationView(suite.wb, 'forks.db', 'nested');
      await f.locator('.lane[data-branch="deeper"]').click();
      await f.locator('.lane.selected .lane-name', { hasText: /^deeper$/ }).waitFor();
      await f.locator('.turn-row[data-turn="6"]').waitFor();
      const badge = async (turn: number): Promise<string> =>
        (await f.locator(`.turn-row[data-turn="${turn}"] .shared-badge`).allTextContents())[0] ?? '';
      assert.deepEqual(
        [await badge(1), await badge(2), await badge(3), await badge(4), await badge(5)],
        ['shared with main', 'shared with main', 'shared with retry', 'shared with retry', ''],
      );
      // Shared turns show the usage recorded where they ran, not "no usage".
      assert.equal(await f.locator('.turn-row[data-turn="2"] .turn-tokens').textContent(), '200 tokens');
      assert.equal(await f.locator('.turn-row[data-turn="4"] .turn-tokens').textContent(), '4,000 tokens');
      assert.equal(await f.locator('.turn-row.fork-start').getAttribute('data-turn'), '5');
      assert.match((await f.locator('.turn-row[data-turn="5"] .fork-marker').textContent()) ?? '', /own turns start here/);
      assert.match((await f.locator('.turn-row[data-turn="5"]').getAttribute('aria-label')) ?? '', /retry continues differently/);
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      await docsScreenshot(suite.wb, `branch-graph-${theme}`);
      // The branch's Tokens table counts its shared turns, marked; the whole session counts each run once.
      await f.locator('vscode-panel-tab#tab-tokens').click();
      await f.locator('.usage-table vscode-data-grid-cell', { hasText: 'shared with main' }).first().waitFor();
      assert.equal(await f.locator('.usage-table vscode-data-grid-cell', { hasText: 'shared with retry' }).count(), 2);
      const totals = await f.locator('.usage-table .totals vscode-data-grid-cell').allTextContents();
      assert.ok(totals.includes((100 + 200 + 3000 + 4000 + 50_000 + 60_000).toLocaleString('en-US')), totals.join(' | '));
    });

    it('keeps 61 branches usable: rows keep their height and the map scrolls to the one in focus', async () => {
      const f = await openConversationView(suite.wb, 'many.db', 'many');
      await f.locator('.lane[data-branch="try-59"]').waitFor({ state: 'attached' });
      assert.equal(await f.locator('.graph-rows .lane').count(), 61);
      // The three forked at turn 1 share nothing with main, so they are roots of their own: no fork line.
      assert.equal(await f.locator('.graph-lines path.graph-fork').count(), 57);
      const box = await f.locator('.lane[data-branch="try-00"]').boundingBox();
      assert.equal(Math.round(box?.height ?? 0), 40, 'rows do not shrink');
      const scroller = f.locator('.branch-graph');
      const [scrollHeight, clientHeight] = await scroller.evaluate((e) => [e.scrollHeight, e.clientHeight]);
      assert.ok(scrollHeight > clientHeight, `the map scrolls (${scrollHeight} > ${clientHeight})`);
      await f.locator('.lane[data-branch="main"]').focus();
      await f.locator('.lane[data-branch="main"]').press('End');
      const last = f.locator('.graph-rows .lane').last();
      await f.locator('.graph-rows .lane:focus').last().waitFor();
      assert.ok((await scroller.evaluate((e) => e.scrollTop)) > 0, 'End scrolled the map');
      const name = await last.getAttribute('data-branch');
      await last.press('Enter');
      await f.locator(`.lane.selected[data-branch="${name}"]`).waitFor();
      // Showing a branch redraws the map: it stays scrolled where it was, not back at the top — also once the
      // turns, latency and reviews the redraw asked for have landed (each may redraw the header again).
      // The position may take a few frames to be applied again (the view laid out anew): it must be back within 5 s
      // and still there half a second later.
      await f.locator('.turn-row').first().waitFor();
      const scrolled = async (): Promise<boolean> => (await scroller.evaluate((e) => e.scrollTop)) > 0;
      for (const deadline = Date.now() + 5_000; !(await scrolled()) && Date.now() < deadline;) await f.waitForTimeout(100);
      await f.waitForTimeout(500);
      assert.ok(await scrolled(), 'the redraw kept the scroll position');
    });

    it('moves through the graph with the keyboard and shows a branch with Enter', async () => {
      const f = await openConversationView(suite.wb, 'forks.db', 'nested');
      const row = (b: string) => f.locator(`.lane[data-branch="${b}"]`);
      await row('main').focus();
      await row('main').press('ArrowDown');
      await f.locator('.lane[data-branch="retry"]:focus').waitFor();
      await row('retry').press('End');
      await f.locator('.lane[data-branch="fresh"]:focus').waitFor();
      await row('fresh').press('Home');
      await f.locator('.lane[data-branch="main"]:focus').waitFor();
      await row('main').press('ArrowRight'); // main's first fork: retry
      await f.locator('.lane[data-branch="retry"]:focus').waitFor();
      await row('retry').press('ArrowRight');
      await f.locator('.lane[data-branch="deeper"]:focus').waitFor();
      await f.locator('.lane[data-branch="deeper"]').press('Enter');
      await f.locator('.lane.selected .lane-name', { hasText: /^deeper$/ }).waitFor();
      await f.locator('.turn-row .shared-badge').first().waitFor();
      // The redraw keeps the focus on the row, so Left goes on from there.
      await f.locator('.lane[data-branch="deeper"]:focus').waitFor();
      await f.locator('.lane[data-branch="deeper"]').press('ArrowLeft');
      await f.locator('.lane[data-branch="retry"]:focus').waitFor();
    });
  });
}
