/**
 * The Context section (issue 44, docs/context.md), in the two states its pictures show:
 * - a demo turn, *recorded*: the demo's runs record each model request's input as the extension's runs do
 *   (scripts/demo.ts), so turn 3 of `weather-trip` made three model requests (two tools), each listing the
 *   instructions, the tool definitions and the items sent, with tokens; nothing of the stored history fell outside.
 *   Picture docs/images/context-recorded-light.png.
 * - a turn of a file the Python SDK wrote (test/fixtures/conformance/ref-basic.db, turn 2), *reconstructed*: no trace
 *   records its input, so it is rebuilt from the stored items and labelled so, with the usage row's cached share and
 *   the note that instructions and tools are unknown. Picture docs/images/context-reconstructed-light.png.
 * Each picture is taken after the spec has checked what it shows.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { writeDemoDatabase } from '../../scripts/demo';
import { codeServerUserDataDir, traceStorePathIn } from '../../scripts/demo/launch';
import { copyFixture } from '../support/tempFiles';
import { FLOW_THEMES, docsScreenshot, useWorkbench } from './suite';
import { openConversationView, type Workbench } from './workbench';

const PYTHON_FIXTURE = join(__dirname, '..', 'fixtures', 'conformance', 'ref-basic.db');

/** Shows `turn`'s detail with its Context open and loaded (the section stays closed until asked for). */
async function openContext(f: Frame, turn: number): Promise<void> {
  await f.locator(`.turn-row[data-turn="${turn}"]`).click();
  await f.locator('.turn-title', { hasText: `Turn ${turn}` }).waitFor();
  if ((await f.locator('.context-section[open]').count()) === 0) await f.locator('.context-section > summary').click();
  await f.locator('.context-request, .context-line.error').first().waitFor({ timeout: 20_000 });
  assert.equal(await f.locator('.context-line.error').count(), 0);
}

/**
 * Saves the docs' picture of the open Context section: in a window taller than the suites' 1400×900 so the label,
 * the requests and the outside line are in one picture, then back to the usual size for the tests after.
 */
async function contextPicture(wb: Workbench, f: Frame, name: string): Promise<void> {
  await wb.page.setViewportSize({ width: 1400, height: 1350 });
  try {
    await f.locator('.context-section > summary').scrollIntoViewIfNeeded();
    await docsScreenshot(wb, name);
  } finally {
    await wb.page.setViewportSize({ width: 1400, height: 900 });
  }
}

/** The kinds of a request's item rows, in the order drawn. */
const kindsOf = (request: ReturnType<Frame['locator']>): Promise<string[]> =>
  request.locator('.context-item').evaluateAll((els) => els.map((e) => e.className.replace(/.*kind-/, '')));

for (const theme of FLOW_THEMES) {
  describe(`a turn's Context, recorded and reconstructed (${theme} theme)`, function () {
    // Its own workbench, as the demo's Timeline suite has: the demo's traces are in this server's global storage.
    const suite = useWorkbench({
      name: 'demo-context',
      theme,
      // The Python-written file has no trace: nothing in the trace store names its session.
      prepare: (workspace) => void copyFixture(PYTHON_FIXTURE, workspace),
      open: () => ({
        beforeWindow: (server) =>
          writeDemoDatabase(join(suite.workspace, 'conversations.db'), traceStorePathIn(codeServerUserDataDir(server))),
      }),
    });

    it('shows what the model saw, labelled recorded: each request with the instructions, the tools and the items sent', async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      await openContext(f, 3);
      assert.equal((await f.locator('.context-badge').textContent())?.trim(), 'Recorded');
      assert.equal(await f.locator('.context-badge.reconstructed').count(), 0, 'never dressed as reconstructed');
      const requests = f.locator('.context-request');
      assert.equal(await requests.count(), 3, 'two tools: three model requests');
      const last = requests.nth(2);
      assert.equal(await last.getAttribute('open'), '', 'the last request is open');
      const kinds = await kindsOf(last);
      assert.deepEqual(kinds.slice(0, 2), ['instructions', 'tool-definitions']);
      assert.ok(kinds.includes('tool-output') && kinds.includes('user'), kinds.join(','));
      const tokens = await last.locator('.context-tokens').allTextContents();
      assert.ok(
        tokens.every((t) => /^\d[\d,]* tokens$/.test(t)),
        tokens.join(' | '),
      );
      assert.equal((await last.locator('.context-segment').count()) > 0, true, 'the share bar is drawn');
      // The recorded inputs carried the whole stored history: no item is greyed as outside.
      assert.match((await f.locator('.context-section').textContent()) ?? '', /Outside the window: nothing\./);
      assert.equal(await f.locator('.context-outside').count(), 0);
      await contextPicture(wb, f, `context-recorded-${theme}`);
    });

    it("labels a Python-written file's turn reconstructed, with its items, cached share and what it cannot know", async () => {
      const { wb } = suite;
      const f = await openConversationView(wb, 'ref-basic.db', 'basic_session');
      await openContext(f, 2);
      const badge = f.locator('.context-badge');
      assert.equal((await badge.textContent())?.trim(), 'Reconstructed');
      assert.equal(await f.locator('.context-badge.recorded').count(), 0, 'never presented as recorded');
      assert.match((await f.locator('.context-source').textContent()) ?? '', /not recorded: what the model received may differ/);
      const text = (await f.locator('.context-section').textContent()) ?? '';
      // The usage row Python stored for turn 2: 96 input tokens, 32 of them cached.
      assert.match(text, /Usage row: 1 request, 96 input tokens, 32 cached \(33%\)/);
      assert.match(text, /Instructions and tool definitions are not items: a reconstruction does not know them\./);
      const requests = f.locator('.context-request');
      assert.equal(await requests.count(), 1);
      // The history before the turn, then the turn's message: stored items #1-#3, in the order sent.
      assert.deepEqual(await kindsOf(requests.first()), ['user', 'assistant', 'user']);
      assert.deepEqual(
        (await requests.first().locator('.context-preview').allTextContents()).map((p) => p.slice(0, 20)),
        ["Hello! What's the ca", 'The capital of Franc', 'Can you explain, in '],
      );
      // Nothing of the branch is older than the window: no limit is known here and the file has no compaction item.
      assert.match(text, /Outside the window: nothing\./);
      assert.equal(await f.locator('.context-outside').count(), 0);
      await contextPicture(wb, f, `context-reconstructed-${theme}`);
    });
  });
}
