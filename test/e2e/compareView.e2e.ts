/**
 * The compare view in the real workbench: *Compare with…* from the tree on a Python-written fixture (ref-multisession.db)
 * and on a session with a retried turn that called a tool with other arguments; next difference by key; the rows'
 * roving tabindex and the focus kept through a write from another process; the time from the command to the first
 * rows drawn. Screenshots docs/images/compare-view-light.png and -dark.png.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { writeScaleFile } from '../../scripts/bench/scaleFiles';
import { writeDemoDatabase } from '../../scripts/demo';
import type { Frame } from 'playwright-core';
import { ROOT, THEMES, useWorkbench, docsScreenshot } from './suite';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'conformance');

const usage = (input: number, output: number) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output,
      inputTokensDetails: [{ cached_tokens: Math.floor(input / 4) }],
      outputTokensDetails: [{ reasoning_tokens: 0 }],
    },
  },
});

/** A trip-planning session whose turn 2 was retried: the retry called the tool with other arguments. */
async function writeRetriedSession(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
  const turn = async (q: string, a: string, input: number, tool?: { id: string; args: unknown; out: string }) => {
    const items: unknown[] = [{ role: 'user', content: q }];
    if (tool)
      items.push(
        { type: 'function_call', call_id: tool.id, name: 'search_flights', arguments: JSON.stringify(tool.args), status: 'completed' },
        { type: 'function_call_output', call_id: tool.id, output: tool.out },
      );
    items.push({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: a }] });
    await s.addItems(items as never);
    await s.storeRunUsage(usage(input, Math.round(input / 5)));
  };
  try {
    await s.addItems([{ role: 'developer', content: 'You are a travel assistant.' }] as never);
    await turn('I want to fly to Lisbon in May.', 'Lisbon in May is lovely. Where do you fly from?', 820);
    await turn('From Berlin, two adults, cheapest please.', 'The cheapest is TAP on May 12 for €142 per person, direct.', 1840, {
      id: 'call_a',
      args: { from: 'BER', to: 'LIS', adults: 2, sort: 'price' },
      out: 'TP 539 · May 12 · €142 · direct',
    });
    await turn('Book it.', 'Booked: TP 539 on May 12, confirmation K7Q2XZ.', 2210);
    await s.createBranchFromTurn(2, 'retry-gpt-4.1-mini');
    await turn(
      'From Berlin, two adults, cheapest please.',
      'The cheapest is easyJet on May 14 for €118 per person, one stop in Porto.',
      1630,
      {
        id: 'call_b',
        args: { from: 'BER', to: 'LIS', adults: 2, sort: 'price', max_stops: 1, dates: ['2027-05-12', '2027-05-14'] },
        out: 'U2 4521 · May 14 · €118 · 1 stop (OPO)',
      },
    );
  } finally {
    s.close();
  }
}

for (const theme of THEMES) {
  describe(`compare view (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'compare',
      theme,
      prepare: async (workspace) => {
        copyFileSync(join(FIXTURES, 'ref-multisession.db'), join(workspace, 'conversations.db'));
        await writeRetriedSession(join(workspace, 'trips.db'));
        await writeDemoDatabase(join(workspace, 'demo.db'));
        // Two 10,000-turn branches (main, and `retry` forked at turn 2), written in the store's format by the benchmark's
        // generator: the target is the first rows within 500 ms of choosing the branch.
        if (theme === 'light')
          writeScaleFile(join(workspace, 'long.db'), {
            sessions: [{ sessionId: 'long', turns: 10_000, branches: [{ name: 'retry', from: 'main', atTurn: 2, ownTurns: 9_999 }] }],
            interleave: false,
          });
      },
      open: { settings: { 'agentSessions.agent.model': 'gpt-4.1' } },
    });

    /** The frame of the compare view titled `title` (an earlier comparison's frame may still be in the page). */
    async function compareFrame(title: string): Promise<Frame> {
      const deadline = Date.now() + 20_000;
      for (;;) {
        for (const f of suite.wb.frames()) {
          const text = await f.evaluate<string | null>("document.querySelector('h1.title')?.textContent ?? null").catch(() => null);
          if (text === title) return f;
        }
        if (Date.now() > deadline) throw new Error(`no compare view titled '${title}'`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    /**
     * Runs Compare with… on `branch` of `session` in `db` and picks `other`; from the tree when `from` is 'tree' (the
     * row labels must be unique in the tree), else from the palette (database, then session, then branch).
     */
    async function compare(db: string, session: string, branch: string, other: string, from: 'tree' | 'palette' = 'palette') {
      if (from === 'tree') {
        await suite.wb.openSidebar();
        await suite.wb.treeRow(db).expand();
        await suite.wb.treeRow(session).expand();
        await suite.wb.treeRow(branch).contextMenu('Compare with…');
      } else {
        await suite.wb.runCommand('Agent Sessions: Compare with…');
        await suite.wb.answer(db);
        // A database with more sessions asks for the session next.
        const sessionPicker = suite.wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: /^Session$/ });
        const branchPicker = suite.wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: `Compare ${branch} with` });
        await sessionPicker.or(branchPicker).first().waitFor();
        if (await sessionPicker.isVisible()) await suite.wb.answer(session);
      }
      // The branch picker (titled "Compare <branch> with…"), not the database picker it follows.
      await suite.wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: `Compare ${branch} with` }).waitFor();
      // Timed from the user's choice of the other branch: what follows is the extension's work and the page's.
      const started = Date.now();
      await suite.wb.answer(other);
      const frame = await compareFrame(`Compare ${branch} ↔ ${other}`);
      await frame.locator('.compare-row, .compare-rows p').first().waitFor({ timeout: 20_000 });
      await frame.locator('#app[data-first-rows-at]').waitFor();
      const drawnAt = Number(await frame.locator('#app').getAttribute('data-first-rows-at'));
      return { frame, ms: drawnAt - started };
    }

    it('compares the Python SDK’s two branches of a session from their fork', async () => {
      const { frame } = await compare('conversations.db', 'alice', 'main', 'alt', 'tree');
      assert.match((await frame.locator('.shared-bar').textContent()) ?? '', /Turn 1 shared/);
      const rows = frame.locator('.compare-row');
      assert.equal(await rows.count(), 1);
      assert.match((await rows.first().locator('.row-head').textContent()) ?? '', /Turn 2.*differs/);
      // Usage per side: the fixture's rows for turn 2 (59 and 55 total tokens).
      const usageLines = await rows.first().locator('.usage-line').allTextContents();
      assert.match(usageLines[0] ?? '', /total 59/);
      assert.match(usageLines[1] ?? '', /total 55 \(−4\)/);
      assert.deepEqual(suite.wb.cspViolations(), []);
    });

    it('compares the demo’s branches from the palette: the shared turns collapsed, the Lisbon turn against the Tokyo one', async () => {
      const { frame } = await compare('demo.db', 'weather-trip', 'main', 'lisbon-instead');
      assert.match((await frame.locator('.shared-bar').textContent()) ?? '', /Turns 1–2 shared/);
      const row = frame.locator('.compare-row').first();
      assert.match((await row.locator('.row-head').textContent()) ?? '', /Turn 3.*differs/);
      assert.ok((await row.locator('[data-column="1"] ins.diff-added').allTextContents()).some((t) => t.includes('Lisbon')));
      // Both called get_weather, with other arguments.
      const changes = await row.locator('[data-column="1"] .json-changes li').allTextContents();
      assert.ok(
        changes.some((c) => /Tokyo/.test(c) && /Lisbon/.test(c)),
        changes.join(' | '),
      );
      await frame.locator('.compare-card .stat', { hasText: 'Cost:' }).first().waitFor();
      assert.deepEqual(suite.wb.cspViolations(), []);
    });

    /** Where the keyboard is in `frame`: `row <turn>` (then `focused` when it is the focused row), else the element's tag. */
    const keyboardAt = (frame: Frame): Promise<string> =>
      frame.evaluate<string>(`(() => {
        const a = document.activeElement;
        const r = a && a.closest('.compare-row');
        if (!r) return a ? a.tagName : 'nothing';
        return 'row ' + r.dataset.turn + (r === a ? '' : ' ' + a.tagName) + (r.classList.contains('focused') ? ' focused' : '');
      })()`);

    /** Waits up to 3 s for the keyboard to be `where` (a redraw may come in steps), then asserts it stays there. */
    async function keyboardIsAt(frame: Frame, where: string): Promise<void> {
      for (let waited = 0; (await keyboardAt(frame)) !== where && waited < 3000; waited += 100) await suite.wb.page.waitForTimeout(100);
      await suite.wb.page.waitForTimeout(300);
      assert.equal(await keyboardAt(frame), where);
    }

    /**
     * What of the rows is in the tab order (a roving tabindex: one row, and only that row's buttons), as
     * `rows <turns>; buttons of <turns>`.
     */
    const tabStops = (frame: Frame): Promise<string> =>
      frame.evaluate<string>(`(() => {
        const rows = Array.from(document.querySelectorAll('.compare-row[tabindex="0"]'), (r) => r.dataset.turn);
        const buttons = document.querySelectorAll('.compare-row :is(button, vscode-button):not([tabindex="-1"])');
        const of = [...new Set(Array.from(buttons, (b) => b.closest('.compare-row').dataset.turn))];
        return 'rows ' + rows.join(',') + '; buttons of ' + of.join(',');
      })()`);

    it('shows a retried turn with word diffs, the tool call’s argument changes, cost deltas, and steps through differences', async () => {
      const { frame, ms } = await compare('trips.db', 'trip', 'main', 'retry-gpt-4.1-mini');
      console.log(
        `      Compare with… → first rows drawn: ${ms} ms (view: ${await frame.locator('#app').getAttribute('data-first-rows-ms')} ms)`,
      );
      const cards = frame.locator('.compare-card');
      assert.equal(await cards.count(), 2);
      // The totals come after the first rows.
      await cards.nth(1).locator('.stat', { hasText: 'Cost:' }).waitFor();
      assert.match((await cards.nth(1).textContent()) ?? '', /Cost: \$[\d.]+ \(−\$/);
      const row = frame.locator('.compare-row').first();
      assert.match((await row.locator('.row-head').textContent()) ?? '', /Turn 2.*differs/);
      // Word diff: the baseline loses "TAP", the retry gains "easyJet".
      assert.ok((await row.locator('[data-column="0"] del.diff-removed').allTextContents()).some((t) => t.includes('TAP')));
      assert.ok((await row.locator('[data-column="1"] ins.diff-added').allTextContents()).some((t) => t.includes('easyJet')));
      // The tool call's arguments, structurally: two keys added.
      const changes = await row.locator('[data-column="1"] .json-changes li').allTextContents();
      assert.deepEqual(changes, ['+ max_stops = 1', '+ dates = ["2027-05-12","2027-05-14"]']);
      // Turn 3 only on main.
      const third = frame.locator('.compare-row').nth(1);
      assert.match((await third.locator('.compare-cell.missing').textContent()) ?? '', /No such turn/);
      // A grid of rows for a screen reader, and, before any row is focused, the first one in the tab order.
      assert.equal(await frame.locator('.compare-rows').getAttribute('role'), 'grid');
      assert.equal(await frame.locator('.compare-rows').getAttribute('aria-rowcount'), '2');
      assert.equal(await row.locator('[role="rowheader"]').count(), 1);
      assert.equal(await row.locator('[role="gridcell"]').count(), 2);
      assert.equal(await tabStops(frame), 'rows 2; buttons of 2');
      // F7 focuses the first difference, again the next.
      await frame.locator('body').press('F7');
      await frame.locator('.compare-row.focused[data-index="0"]').waitFor();
      await frame.locator('body').press('F7');
      await frame.locator('.compare-row.focused[data-index="1"]').waitFor();
      await frame
        .locator('.compare-row.focused[data-index="0"]')
        .waitFor({ state: 'detached' })
        .catch(() => undefined);
      await frame.locator('body').press('Shift+F7');
      await frame.locator('.compare-row.focused[data-index="0"]').waitFor();
      assert.deepEqual(suite.wb.cspViolations(), []);
      await docsScreenshot(suite.wb, `compare-view-${theme}`);

      // The arrow keys move between rows, and the focused row is the one Tab lands on (from the last card's button, the
      // last thing before the rows), not a button in it.
      await keyboardIsAt(frame, 'row 2 focused');
      await suite.wb.page.keyboard.press('ArrowDown');
      await keyboardIsAt(frame, 'row 3 focused');
      assert.equal(await tabStops(frame), 'rows 3; buttons of 3');
      await frame.locator('.compare-card vscode-button').last().focus();
      await suite.wb.page.keyboard.press('Tab');
      await keyboardIsAt(frame, 'row 3 focused');
      // Another process appends a turn to main: the rows are drawn again, and the keyboard stays on turn 3, the page
      // where it was scrolled; ArrowDown goes on to the new row.
      await frame.evaluate('document.scrollingElement.scrollTop = document.scrollingElement.scrollHeight');
      const scrolled = await frame.evaluate<number>('document.scrollingElement.scrollTop');
      const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: join(suite.workspace, 'trips.db') });
      try {
        await s.addItems([{ role: 'user', content: `Written by another process (${theme})` }] as never);
      } finally {
        s.close();
      }
      await frame.locator('.compare-row[data-turn="4"]').waitFor({ timeout: 10_000 });
      await keyboardIsAt(frame, 'row 3 focused');
      assert.equal(await frame.evaluate<number>('document.scrollingElement.scrollTop'), scrolled);
      assert.equal(await tabStops(frame), 'rows 3; buttons of 3');
      await suite.wb.page.keyboard.press('ArrowDown');
      await keyboardIsAt(frame, 'row 4 focused');
      assert.equal(await tabStops(frame), 'rows 4; buttons of 4');
    });

    if (theme === 'light')
      it('shows the first rows of two 10,000-turn branches soon after the branch is chosen', async () => {
        const { frame, ms } = await compare('long.db', 'long', 'main', 'retry');
        const view = await frame.locator('#app').getAttribute('data-first-rows-ms');
        console.log(`      10,000-turn pair: branch chosen → first rows drawn ${ms} ms (page script start → first rows ${view} ms)`);
        assert.match((await frame.locator('.shared-bar').textContent()) ?? '', /Turn 1 shared/);
        assert.match((await frame.locator('.compare-status').textContent()) ?? '', /9,999 turns after the shared ones/);
        assert.equal(await frame.locator('.compare-row').count(), 20);
      });
  });
}
