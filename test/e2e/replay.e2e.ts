/**
 * Replaying recorded tool results from the conversation view, in the real workbench (issue 41): a what-if on the
 * demo's weather turn ("What's the weather in Paris?", one get_weather call). The form offers the tools mode and
 * previews the recorded call; in replay mode the tool never runs (a side-effect file proves it), the model gets the
 * recorded output, the run's log and the new turn's call card say *replayed*, the run summary counts it, and the
 * compare column counts it too. In live mode the tool runs and everything says *live*. The agent is a workspace
 * module with the demo's get_weather tool, against a loopback model server.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { writeDemoDatabase } from '../../scripts/demo';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { FLOW_THEMES, docsScreenshot, useWorkbench } from './suite';
import { openConversationView } from './workbench';

/** Polls `fn` until it returns a value (20 s at most). */
async function until<T>(fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

for (const theme of FLOW_THEMES) {
  describe(`replayed tool results in the view (${theme} theme)`, function () {
    let model: LoopbackOpenAI;
    /** One line per real run of the tool. */
    let toolRuns: string;

    before(async function () {
      model = await startLoopbackOpenAI({
        script: (req) => {
          const input = Array.isArray(req.body.input) ? (req.body.input as Record<string, unknown>[]) : [];
          const last = input.at(-1);
          // After the tool's answer: say what it returned, so the test sees which output the model got.
          if (last?.type === 'function_call_output') {
            const output = typeof last.output === 'string' ? last.output : JSON.stringify(last.output);
            return { kind: 'text', text: `Here is what I found: ${output}` };
          }
          const city = /paris|lisbon/i.exec(lastUserText(req.body))?.[0].toLowerCase();
          if (city) return { kind: 'calls', calls: [{ name: 'get_weather', arguments: { city: city[0]!.toUpperCase() + city.slice(1) } }] };
          return { kind: 'text', text: 'Which city?' };
        },
      });
    });

    after(async function () {
      await model?.close();
    });

    const suite = useWorkbench({
      name: 'replay',
      theme,
      prepare: async (workspace) => {
        await writeDemoDatabase(join(workspace, 'conversations.db'));
        toolRuns = join(workspace, 'tool-runs.log');
        // The demo's get_weather, except that each real run leaves a line (the side effect a replay must not repeat)
        // and today's weather differs from the recording's.
        writeFileSync(
          join(workspace, 'weatherAgent.js'),
          `const { appendFileSync } = require('node:fs');
module.exports = ({ sdk, z }) => new sdk.Agent({
  name: 'Weather assistant',
  instructions: 'You answer weather questions using the tools.',
  tools: [sdk.tool({ name: 'get_weather', description: 'Current weather for a city', parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => { appendFileSync(${JSON.stringify(toolRuns)}, city + '\\n'); return city + ': 30°C, live today'; } })],
});`,
        );
      },
      open: () => ({
        settings: {
          'agentSessions.agent.baseUrl': model.baseUrl,
          'agentSessions.agent.model': 'loopback-model',
          'agentSessions.agent.models': ['loopback-mini'],
          'agentSessions.agent.module': 'weatherAgent.js',
        },
      }),
    });

    const ranTool = (): string => (existsSync(toolRuns) ? readFileSync(toolRuns, 'utf8') : '');

    /** The demo's weather turn on main, selected in the view. */
    async function weatherTurn(): Promise<Frame> {
      const f = await openConversationView(suite.wb, 'conversations.db', 'weather-trip');
      await f.locator('.lane[data-branch="main"]').click();
      await f.locator('.lane.selected[data-branch="main"]').waitFor();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      return f;
    }

    /** The compare view (opened as the run ends) whose second column's replay counts say `counts`. */
    async function compareCounts(counts: string): Promise<Frame> {
      return until(async () => {
        for (const frame of suite.wb.frames()) {
          const text = await frame
            .evaluate<string | null>("document.querySelectorAll('.compare-card')[1]?.querySelector('.replay-stat')?.textContent ?? null")
            .catch(() => null);
          if (text?.includes(counts)) return frame;
        }
        return undefined;
      });
    }

    it('Retry with models previews the recorded call, replays it by default, and every view says replayed', async () => {
      const f = await weatherTurn();
      await f.locator('.item-user vscode-button.retry-models').click();
      const form = f.locator('.what-if-form');
      await form.locator('.what-if-tools').waitFor();
      // The default mode (agentSessions.replay.mode) is chosen, and the turn's recorded call is previewed.
      assert.equal(await form.locator('input.what-if-tools-mode:checked').getAttribute('value'), 'replay');
      const rows = form.locator('.replay-table tbody tr');
      assert.equal(await rows.count(), 1);
      assert.equal((await rows.locator('.replay-tool').textContent())?.trim(), 'get_weather');
      assert.match((await rows.locator('.replay-arguments').textContent()) ?? '', /"city":\s*"Paris"/);
      assert.match((await rows.locator('.replay-output').textContent()) ?? '', /Paris: 18°C, light rain/);
      await form.locator('.what-if-choice', { hasText: 'loopback-mini' }).locator('input').uncheck();
      await form.locator('.what-if-buttons').scrollIntoViewIfNeeded();
      await docsScreenshot(suite.wb, `replay-what-if-form-${theme}`);
      await f.locator('vscode-button.what-if-submit', { hasText: 'Retry on loopback-model' }).click();

      // The run's log: the call's output with its badge, the model's answer from the recorded output, the summary.
      await f.locator('.run-tool-output .replay-badge.replay-replayed').waitFor({ timeout: 20_000 });
      await f.locator('.run-text', { hasText: 'Paris: 18°C, light rain' }).waitFor({ timeout: 20_000 });
      await f.locator('.run-replay-summary', { hasText: '1 tool call replayed.' }).waitFor({ timeout: 20_000 });
      assert.equal(ranTool(), '', 'the tool did not run');

      // The compare column of the retry counts its calls.
      const grid = await compareCounts('Tool calls: 1 replayed · 0 live');
      assert.equal(await grid.locator('.compare-card').first().locator('.replay-stat').count(), 0, 'main has no run of ours');

      // The new turn's call card, once the marks are read: replayed, linked to the recorded call on main.
      const badge = f.locator('.item-function_call .replay-badge.replay-replayed');
      await badge.waitFor({ timeout: 20_000 });
      assert.equal((await badge.textContent())?.trim(), 'replayed');
      // The card's badge, the run's log with its summary, and the compare column in one picture.
      await f.locator('.run-replay-summary').scrollIntoViewIfNeeded();
      await docsScreenshot(suite.wb, `replay-what-if-${theme}`);
      await f.locator('.item-function_call button.replay-recorded').click();
      await f.locator('.lane.selected[data-branch="main"]').waitFor();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      await f.locator('.item.replay-target').waitFor();
    });

    it('Edit and resend in live mode runs the tool, and every view says live', async () => {
      const f = await weatherTurn();
      await f.locator('.item-user vscode-button.edit-resend').click();
      const form = f.locator('.what-if-form');
      await form.locator('input.what-if-tools-mode[value="live"]').check();
      await f.locator('vscode-button.what-if-submit', { hasText: 'Resend' }).click();
      await f.locator('.run-note', { hasText: 'Tools mode: live.' }).waitFor({ timeout: 20_000 });
      await f.locator('.run-tool-output .replay-badge.replay-live').waitFor({ timeout: 20_000 });
      await f.locator('.run-text', { hasText: 'Paris: 30°C, live today' }).waitFor({ timeout: 20_000 });
      await f.locator('.run-replay-summary', { hasText: 'Tools live: 1 ran live (get_weather).' }).waitFor({ timeout: 20_000 });
      assert.equal(ranTool(), 'Paris\n', 'the tool ran once');
      const badge = f.locator('.item-function_call .replay-badge.replay-live');
      await badge.waitFor({ timeout: 20_000 });
      // In the theme's warning colour, not the text's.
      const colours = await f.evaluate<string[]>(
        "(() => { const b = document.querySelector('.item-function_call .replay-badge.replay-live'); return [getComputedStyle(b).color, getComputedStyle(b.closest('.item')).color]; })()",
      );
      assert.notEqual(colours[0], colours[1]);
      await compareCounts('Tool calls: 0 replayed · 1 live');
      await badge.scrollIntoViewIfNeeded();
      await docsScreenshot(suite.wb, `replay-live-${theme}`);
    });

    it('Edit and resend asking for another city leaves the recording: the call runs live, and where it diverged is shown', async () => {
      const f = await weatherTurn();
      await f.locator('.item-user vscode-button.edit-resend').click();
      await f.locator('textarea.what-if-text').fill("What's the weather in Lisbon?");
      await f.locator('vscode-button.what-if-submit', { hasText: 'Resend' }).click();
      await f.locator('.run-tool-output .replay-badge.replay-live').waitFor({ timeout: 20_000 });
      await f
        .locator('.run-replay-summary', {
          hasText: '1 ran live (get_weather); diverged at step 1: get_weather with other arguments (city: "Paris" → "Lisbon").',
        })
        .waitFor({ timeout: 20_000 });
      const diverged = f.locator('.run-replay .replay-divergence');
      assert.match(
        (await diverged.textContent()) ?? '',
        /Diverged at step 1.*Recorded: get_weather\(\{"city":\s*"Paris"\}\).*This run: get_weather/,
      );
      assert.equal((await diverged.locator('.replay-diff li').textContent())?.trim(), 'city: "Paris" → "Lisbon"');
      assert.match(ranTool(), /Lisbon\n$/);
      const grid = await compareCounts('Tool calls: 0 replayed · 1 live');
      await grid
        .locator('.compare-card')
        .nth(1)
        .locator('.replay-divergence .replay-diff', { hasText: 'city: "Paris" → "Lisbon"' })
        .waitFor();
      await docsScreenshot(suite.wb, `replay-divergence-${theme}`);
    });

    it('Strict refuses a call with no recorded result before the tool runs, and writes nothing', async () => {
      const f = await weatherTurn();
      const before = ranTool();
      await f.locator('.item-user vscode-button.edit-resend').click();
      await f.locator('textarea.what-if-text').fill("What's the weather in Lisbon?");
      await f.locator('.what-if-form input.what-if-tools-mode[value="strict"]').check();
      await f.locator('vscode-button.what-if-submit', { hasText: 'Resend' }).click();
      await f.locator('.run-note', { hasText: 'Tools mode: strict.' }).waitFor({ timeout: 20_000 });
      const error = f.locator('.run-error.failure-tool');
      await error.waitFor({ timeout: 20_000 });
      assert.match((await error.textContent()) ?? '', /get_weather/);
      await f.locator('.run-replay-summary', { hasText: '0 tool calls replayed, 1 unmatched (get_weather)' }).waitFor();
      assert.equal(ranTool(), before, 'the tool did not run');
    });

    it('Retry from here uses the default mode and says which in its run log', async () => {
      const f = await weatherTurn();
      const before = ranTool();
      await f.locator('.item-user vscode-button.retry-here').click();
      // Said in the run's log: the view moves to the run's new branch, away from the button's status line.
      await f
        .locator('.run-note', { hasText: 'Tools mode: replay (the default, agentSessions.replay.mode).' })
        .waitFor({ timeout: 20_000 });
      await f.locator('.run-replay-summary', { hasText: '1 tool call replayed.' }).waitFor({ timeout: 20_000 });
      assert.equal(ranTool(), before, 'the tool did not run again');
    });
  });
}
