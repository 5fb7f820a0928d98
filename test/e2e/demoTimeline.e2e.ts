/**
 * The demo as `npm start` prepares it (scripts/demo.ts): the session file in the folder the workbench opens, the
 * runs' traces in the trace store of the extension's global storage, put there before the first window as
 * scripts/demo/launch.ts does for code-server. A newcomer's first Timeline, on the demo's `weather-trip`, draws the
 * run's waterfall (the agent, its model requests with model and tokens, its tools), not the empty hint (issue 40,
 * item 6).
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { codeServerUserDataDir, traceStorePathIn } from '../../scripts/demo/launch';
import { SCRIPTED_MODEL_NAME } from '../../src/agents/scriptedModel';
import { FLOW_THEMES, useWorkbench } from './suite';
import { openConversationView } from './workbench';

for (const theme of FLOW_THEMES) {
  describe(`the demo's first Timeline (${theme} theme)`, function () {
    // Its own workbench (a `beforeWindow` is never shared): the demo's traces are in this server's global storage,
    // where a later suite of a shared one would see them on its own demo turns.
    const suite = useWorkbench({
      name: 'demo-timeline',
      theme,
      open: () => ({
        beforeWindow: (server) =>
          writeDemoDatabase(join(suite.workspace, 'conversations.db'), traceStorePathIn(codeServerUserDataDir(server))),
      }),
    });

    it("draws a demo turn's waterfall: the agent, each model request with its model and tokens, the tools", async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      // Turn 3 ("And in Tokyo, in Fahrenheit please?"): two tools, three model requests.
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      if ((await f.locator('.timeline-section[open]').count()) === 0) await f.locator('.timeline-section > summary').click();
      // Either is drawn once the trace was read: the waterfall, or the hint of a turn without a trace.
      await f.locator('.span-row, .timeline-empty').first().waitFor({ timeout: 20_000 });
      assert.equal(await f.locator('.timeline-empty').count(), 0, 'the Timeline shows the empty hint, not the demo run');
      const rows = f.locator('.span-row');
      const drawn = await rows.evaluateAll((els) =>
        els.map((e) => ({
          kind: e.getAttribute('data-kind'),
          label: e.querySelector('.span-label')?.textContent ?? '',
          detail: e.querySelector('.span-detail')?.textContent ?? '',
        })),
      );
      assert.deepEqual(
        drawn.filter((s) => s.kind === 'agent').map((s) => s.label),
        ['agent Weather assistant'],
      );
      const models = drawn.filter((s) => s.kind === 'model');
      assert.equal(models.length, 3, JSON.stringify(drawn));
      for (const m of models) {
        assert.equal(m.label, `generation ${SCRIPTED_MODEL_NAME}`);
        assert.match(m.detail, /^\d[\d,]* in \/ \d[\d,]* out$/);
      }
      assert.deepEqual(
        drawn
          .filter((s) => s.kind === 'tool')
          .map((s) => s.label)
          .sort(),
        ['convert_temperature', 'get_weather'],
      );
      assert.match((await f.locator('.timeline-summary').textContent()) ?? '', /3 model requests/);
    });
  });
}
