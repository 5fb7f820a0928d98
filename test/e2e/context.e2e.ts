/**
 * The Context section on the demo (issue 44, docs/context.md): the demo's runs record each model request's input as
 * the extension's runs do (scripts/demo.ts), so a demo turn's Context is *recorded*: turn 3 of `weather-trip` made
 * three model requests (two tools), each listing the instructions, the tool definitions and the items sent, with
 * tokens; nothing of the stored history fell outside.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { codeServerUserDataDir, traceStorePathIn } from '../../scripts/demo/launch';
import { FLOW_THEMES, useWorkbench } from './suite';
import { openConversationView } from './workbench';

for (const theme of FLOW_THEMES) {
  describe(`a demo turn's Context (${theme} theme)`, function () {
    // Its own workbench, as the demo's Timeline suite has: the demo's traces are in this server's global storage.
    const suite = useWorkbench({
      name: 'demo-context',
      theme,
      open: () => ({
        beforeWindow: (server) =>
          writeDemoDatabase(join(suite.workspace, 'conversations.db'), traceStorePathIn(codeServerUserDataDir(server))),
      }),
    });

    it('shows what the model saw, labelled recorded: each request with the instructions, the tools and the items sent', async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      if ((await f.locator('.context-section[open]').count()) === 0) await f.locator('.context-section > summary').click();
      await f.locator('.context-request, .context-line.error').first().waitFor({ timeout: 20_000 });
      assert.equal(await f.locator('.context-line.error').count(), 0);
      assert.equal((await f.locator('.context-badge').textContent())?.trim(), 'Recorded');
      assert.equal(await f.locator('.context-badge.reconstructed').count(), 0, 'never dressed as reconstructed');
      const requests = f.locator('.context-request');
      assert.equal(await requests.count(), 3, 'two tools: three model requests');
      const last = requests.nth(2);
      assert.equal(await last.getAttribute('open'), '', 'the last request is open');
      const kinds = await last.locator('.context-item').evaluateAll((els) => els.map((e) => e.className.replace(/.*kind-/, '')));
      assert.deepEqual(kinds.slice(0, 2), ['instructions', 'tool-definitions']);
      assert.ok(kinds.includes('tool-output') && kinds.includes('user'), kinds.join(','));
      const tokens = await last.locator('.context-tokens').allTextContents();
      assert.ok(
        tokens.every((t) => /^\d[\d,]* tokens$/.test(t)),
        tokens.join(' | '),
      );
      assert.equal((await last.locator('.context-segment').count()) > 0, true, 'the share bar is drawn');
      assert.match((await f.locator('.context-section').textContent()) ?? '', /Outside the window: nothing\./);
    });
  });
}
