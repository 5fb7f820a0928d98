/**
 * Search in the real workbench, both themes: *Search Sessions…* from the palette over two session files in the
 * workspace streams hits into the Search Results view (match highlighted), a hit opens its turn in the conversation
 * view, and Ctrl+F there searches the whole session with next/previous ("1 of 4 · 1 on another branch"), stepping on
 * to a hit on another branch shows that branch (selected on the branch map) at the hit's turn. Screenshots for the docs.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { FLOW_THEMES, useWorkbench, docsScreenshot } from './suite';
import { viewFrame } from './workbench';

async function write(path: string, sessionId: string, city: string, failed: boolean, branch = false): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, createTables: true });
  try {
    await s.addItems([
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Hi! Where to?' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: `What is the WEATHER in ${city}?` },
      { type: 'function_call', call_id: `c-${sessionId}`, name: 'get_weather', arguments: JSON.stringify({ city }) },
      {
        type: 'function_call_output',
        call_id: `c-${sessionId}`,
        output: failed ? 'An error occurred while running the tool. Please try again. Error: timeout' : '22°C and sunny',
      },
      { role: 'assistant', content: [{ type: 'output_text', text: failed ? 'I could not get the forecast.' : 'Sunny, 22 °C.' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: "And tomorrow's weather?" },
      { role: 'assistant', content: [{ type: 'output_text', text: `Weather in ${city} tomorrow: rain in the morning.` }] },
    ] as never);
    if (branch) {
      // A branch forked at turn 3 (turns 1–2 shared with main) with a turn of its own that matches.
      await s.createBranchFromTurn(3, 'weekend');
      await s.addItems([
        { role: 'user', content: 'What about the weekend weather?' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Dry and mild all weekend.' }] },
      ] as never);
    }
  } finally {
    s.close();
  }
}

for (const theme of FLOW_THEMES) {
  describe(`search (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'search',
      theme,
      prepare: async (workspace) => {
        await write(join(workspace, 'lisbon.db'), 'lisbon-trip', 'Lisbon', false, true);
        await write(join(workspace, 'oslo.db'), 'oslo-trip', 'Oslo', true);
      },
      reset: false,
    });

    it('searches both files from the palette, highlights the matches, and opens a hit; Ctrl+F searches the view', async () => {
      await suite.wb.page.setViewportSize({ width: 1600, height: 1000 });
      await suite.wb.openSidebar();
      await suite.wb.treeRow('lisbon.db').waitFor(30_000);
      await suite.wb.treeRow('oslo.db').waitFor(30_000);
      await suite.wb.runCommand('Agent Sessions: Search Sessions…');
      await suite.wb.answer('weather');
      const results = suite.wb.page.locator('.monaco-list-row', { hasText: 'What is the WEATHER in Lisbon?' });
      await results.waitFor({ timeout: 30_000 });
      await suite.wb.page.getByText(/7 hits for "weather" in 2 file\(s\)/).waitFor({ timeout: 30_000 });
      // Both files, each with its session, and the match highlighted in the snippet.
      for (const label of ['lisbon.db', 'oslo.db', 'lisbon-trip', 'oslo-trip']) {
        await suite.wb.page.locator('.monaco-list-row', { hasText: label }).first().waitFor();
      }
      assert.equal(await results.locator('.highlight').first().textContent(), 'WEATHER');
      assert.match((await results.locator('.label-description').textContent()) ?? '', /main · turn 2 · user/);
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `search-results-${theme}`);

      // A hit opens its turn in the conversation view.
      await results.click();
      const f = await viewFrame(suite.wb);
      await f.locator('.turn-row[data-turn="2"][aria-selected="true"]').waitFor({ timeout: 20_000 });

      // Ctrl+F: the view's own search over the whole session, the shown branch's hits first, stepping with Enter and
      // Shift+Enter.
      await f.locator('h1.title').click();
      await suite.wb.page.keyboard.press('Control+f');
      const input = f.locator('.search-input');
      await input.waitFor({ state: 'visible' });
      await input.fill('weather');
      await input.press('Enter');
      await f.locator('.search-count', { hasText: '1 of 4 · 1 on another branch' }).waitFor({ timeout: 20_000 });
      await input.press('Enter');
      await f.locator('.search-count', { hasText: '2 of 4' }).waitFor();
      await f.locator('.turn-row[data-turn="3"][aria-selected="true"]').waitFor();
      await f.locator('.item.search-hit').waitFor();
      await input.press('Shift+Enter');
      await f.locator('.search-count', { hasText: '1 of 4' }).waitFor();
      await f.locator('.turn-row[data-turn="2"][aria-selected="true"]').waitFor();
      await input.press('Enter');
      await f.locator('.search-count', { hasText: '2 of 4' }).waitFor();
      await input.press('Enter');
      await f.locator('.search-count', { hasText: '3 of 4' }).waitFor();
      assert.equal(await f.locator('.lane.selected').getAttribute('data-branch'), 'main');
      // The last hit is on the weekend branch: the view shows that branch (selected on the map) at the hit's turn,
      // the hit's item marked; the session's current branch is left as it was.
      await input.press('Enter');
      await f.locator('.search-count', { hasText: '4 of 4 · 1 on another branch' }).waitFor();
      await f.locator('.lane.selected[data-branch="weekend"]').waitFor({ timeout: 20_000 });
      await f.locator('.turn-row[data-turn="3"][aria-selected="true"]').waitFor();
      await f.locator('.item.search-hit', { hasText: 'What about the weekend weather?' }).waitFor({ timeout: 20_000 });
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `search-in-view-${theme}`);
      // On past the last hit: back to main's first.
      await input.press('Enter');
      await f.locator('.search-count', { hasText: '1 of 4' }).waitFor();
      await f.locator('.lane.selected[data-branch="main"]').waitFor({ timeout: 20_000 });
      await f.locator('.turn-row[data-turn="2"][aria-selected="true"]').waitFor();
      // A query the syntax refuses says why, in the counter.
      // Editing the query drops the old hits (and any search still running for it).
      await input.fill('is:slow');
      assert.equal(await f.locator('.search-count').textContent(), '');
      assert.equal(await f.locator('.item.search-hit').count(), 0);
      await input.press('Enter');
      await f.locator('.search-count.error', { hasText: 'Unknown filter "is:slow"' }).waitFor({ timeout: 10_000 });
      await input.press('Escape');
      assert.equal(await f.locator('.search-bar').isHidden(), true);
    });
  });
}
