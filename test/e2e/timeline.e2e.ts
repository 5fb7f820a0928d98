/**
 * A turn's Timeline in the real workbench: OTLP spans imported with *Import OTLP Traces…* (an agent run with model
 * requests, a guardrail, a handoff, a tool and a failed tool, linked to turn 3 of the demo's `weather-trip`), drawn as
 * a waterfall under the turn: nested, model and tokens on the requests, the failure marked, walked with the keyboard,
 * a span's attributes one Enter away. Screenshots for the docs in both themes.
 */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { THEMES, docsScreenshot, useWorkbench } from './suite';
import { openConversationView } from './workbench';

const T0 = BigInt(Date.UTC(2026, 11, 2, 9, 0, 0)) * 1_000_000n;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** One span in OTLP JSON; times in ms from the run's start. */
function span(
  id: number,
  parent: number | null,
  name: string,
  startMs: number,
  endMs: number,
  attrs: Record<string, string | number>,
  error?: string,
) {
  return {
    traceId: TRACE,
    spanId: id.toString(16).padStart(16, '0'),
    ...(parent ? { parentSpanId: parent.toString(16).padStart(16, '0') } : {}),
    name,
    kind: 1,
    startTimeUnixNano: String(T0 + BigInt(startMs) * 1_000_000n),
    endTimeUnixNano: String(T0 + BigInt(endMs) * 1_000_000n),
    attributes: Object.entries(attrs).map(([key, v]) => ({
      key,
      value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
    })),
    ...(error ? { status: { code: 2, message: error } } : {}),
  };
}

function otlpFile(): string {
  const link = { 'agent_sessions.session_id': 'weather-trip', 'agent_sessions.branch_id': 'main', 'agent_sessions.turn_number': 3 };
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'trip-planner' } }] },
        scopeSpans: [
          {
            spans: [
              span(1, null, 'invoke_agent Trip planner', 0, 4300, {
                ...link,
                'gen_ai.operation.name': 'invoke_agent',
                'gen_ai.agent.name': 'Trip planner',
              }),
              span(2, 1, 'no_pii', 0, 6, { 'openinference.span.kind': 'GUARDRAIL' }),
              span(3, 1, 'chat gpt-4.1', 10, 1210, {
                'gen_ai.operation.name': 'chat',
                'gen_ai.request.model': 'gpt-4.1',
                'gen_ai.usage.input_tokens': 812,
                'gen_ai.usage.output_tokens': 64,
              }),
              span(4, 1, 'handoff Trip planner → Booking agent', 1212, 1216, { 'agent_sessions.span.kind': 'handoff' }),
              span(5, 1, 'execute_tool search_trains', 1220, 1520, {
                'gen_ai.operation.name': 'execute_tool',
                'gen_ai.tool.name': 'search_trains',
              }),
              span(
                6,
                1,
                'execute_tool book_train',
                1530,
                4230,
                { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'book_train' },
                'booking service timed out after 2.7 s',
              ),
              span(7, 1, 'chat gpt-4.1', 4235, 4295, {
                'gen_ai.operation.name': 'chat',
                'gen_ai.request.model': 'gpt-4.1',
                'gen_ai.usage.input_tokens': 1004,
                'gen_ai.usage.output_tokens': 41,
              }),
            ],
          },
        ],
      },
    ],
  });
}

for (const theme of THEMES) {
  describe(`timeline (${theme} theme)`, function () {
    const suite = useWorkbench({
      name: 'timeline',
      theme,
      prepare: async (workspace) => {
        await writeDemoDatabase(join(workspace, 'conversations.db'));
        writeFileSync(join(workspace, 'run.otlp.json'), otlpFile());
      },
    });

    it("draws a turn's timeline from imported OTLP spans: nested, with models and tokens, a handoff, a failed tool marked; keyboard and attributes", async () => {
      const { wb } = suite;
      await wb.openSidebar();
      await wb.runCommand('Agent Sessions: Import OTLP Traces…');
      await wb.chooseFile(join(suite.workspace, 'run.otlp.json'));
      // The import's message, in the notification centre (its toast may be gone by then).
      await wb.runCommand('Notifications: Show Notifications');
      await wb.page.locator('.notifications-center .notification-list-item', { hasText: 'Imported 7 spans.' }).waitFor({ timeout: 20_000 });
      await wb.page.keyboard.press('Escape');

      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      await f.locator('.timeline-section > summary').click();
      const rows = f.locator('.span-row');
      await rows.nth(6).waitFor({ timeout: 20_000 });
      assert.equal(await rows.count(), 7);
      assert.deepEqual(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind'))), [
        'agent',
        'guardrail',
        'model',
        'handoff',
        'tool',
        'tool',
        'model',
      ]);
      assert.match((await f.locator('.timeline-summary').textContent()) ?? '', /4,300 ms in all · 2 model requests · 1 failed/);
      // The model is in the name already ("chat gpt-4.1"): the detail adds the tokens.
      assert.equal(await rows.nth(2).locator('.span-label').textContent(), 'chat gpt-4.1');
      assert.equal(await rows.nth(2).locator('.span-detail').textContent(), '812 in / 64 out');
      assert.equal(await rows.nth(5).locator('.span-error').textContent(), 'failed');
      assert.equal(await rows.nth(5).locator('.span-bar.failed').count(), 1);
      // Children are indented under the run.
      const indent = await rows.evaluateAll((els) => els.map((e) => e.querySelector('.span-name')?.getAttribute('style') ?? ''));
      assert.deepEqual(
        indent,
        [0, 14, 14, 14, 14, 14, 14].map((px) => `padding-inline-start: ${px}px;`),
      );
      // One Tab stop; the arrows walk the rows; Enter shows the attributes.
      await rows.first().focus();
      await rows.first().press('ArrowDown');
      await f.locator('.span-row:focus[data-index="1"]').waitFor();
      await f.locator('.span-row:focus').press('End');
      await f.locator('.span-row:focus[data-index="6"]').waitFor();
      await f.locator('.span-row:focus').press('ArrowUp');
      await f.locator('.span-row:focus[data-index="5"]').waitFor();
      assert.equal(await f.locator('.span-row[tabindex="0"]').count(), 1, 'one Tab stop');
      await f.locator('.span-row:focus').press('Enter');
      const attributes = f.locator('.span-attributes');
      await attributes.waitFor();
      assert.match((await attributes.textContent()) ?? '', /Errorbooking service timed out after 2\.7 s.*gen_ai\.tool\.namebook_train/s);
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `timeline-${theme}`);
    });
  });
}
