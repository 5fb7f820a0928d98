/**
 * A turn's Timeline in the real workbench: OTLP spans imported with *Import OTLP Traces…* (an agent run with model
 * requests, a guardrail, a handoff, a tool and a failed tool, linked to turn 3 of the demo's `weather-trip`), drawn as
 * a waterfall under the turn: nested, model and tokens on the requests, the failure marked, walked with the keyboard,
 * a span's attributes one Enter away. Screenshots for the docs in both themes.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { writeDemoDatabase } from '../../scripts/demo';
import { THEMES, docsScreenshot, useWorkbench } from './suite';
import { compareViewFrame, openConversationView } from './workbench';

/**
 * What `read` gives once two reads 200 ms apart agree and are not empty (at most 10 s; then the last read, for the
 * assertion to report): the rows of a view that may be redrawn under the test.
 */
async function steady<T extends readonly unknown[]>(read: () => Promise<T>): Promise<T> {
  const until = Date.now() + 10_000;
  let last = await read();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const next = await read();
    if ((next.length > 0 && isDeepStrictEqual(next, last)) || Date.now() > until) return next;
    last = next;
  }
}

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

/**
 * Two more traces: lisbon-instead's turn 3 by its run (2,100 ms, one request on gpt-4.1-mini), and a run that names no
 * session (800 ms, one request on o3): unlinked until someone links it by hand.
 */
function moreOtlpFile(): string {
  const lisbon = {
    'agent_sessions.session_id': 'weather-trip',
    'agent_sessions.branch_id': 'lisbon-instead',
    'agent_sessions.turn_number': 3,
  };
  const spans = [
    {
      ...span(11, null, 'invoke_agent Trip planner', 0, 2100, { ...lisbon, 'gen_ai.operation.name': 'invoke_agent' }),
      traceId: 'a'.repeat(32),
    },
    {
      ...span(12, 11, 'chat gpt-4.1-mini', 20, 2050, { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4.1-mini' }),
      traceId: 'a'.repeat(32),
    },
    { ...span(21, null, 'nightly-eval run', 0, 800, { 'gen_ai.operation.name': 'invoke_agent' }), traceId: 'b'.repeat(32) },
    { ...span(22, 21, 'chat o3', 10, 790, { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'o3' }), traceId: 'b'.repeat(32) },
  ];
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'evals' } }] }, scopeSpans: [{ spans }] }],
  });
}

for (const theme of THEMES) {
  describe(`timeline (${theme} theme)`, function () {
    // The OTLP receiver's port: a free one, found before the workbench opens and given to it in the settings.
    let port = 0;
    before(async () => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      port = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
    });
    const suite = useWorkbench({
      name: 'timeline',
      theme,
      open: () => ({ settings: { 'agentSessions.traces.receiver.port': port } }),
      prepare: async (workspace) => {
        await writeDemoDatabase(join(workspace, 'conversations.db'));
        writeFileSync(join(workspace, 'run.otlp.json'), otlpFile());
        writeFileSync(join(workspace, 'more.otlp.json'), moreOtlpFile());
      },
    });

    /** Imports an OTLP file with the palette command and waits for its message in the notification centre. */
    async function importTraces(file: string, message: string): Promise<void> {
      const { wb } = suite;
      await wb.runCommand('Agent Sessions: Import OTLP Traces…');
      await wb.chooseFile(join(suite.workspace, file));
      // The import's message, in the notification centre (its toast may be gone by then).
      await wb.runCommand('Notifications: Show Notifications');
      await wb.page.locator('.notifications-center .notification-list-item', { hasText: message }).first().waitFor({ timeout: 20_000 });
      await wb.page.keyboard.press('Escape');
    }

    it("draws a turn's timeline from imported OTLP spans: nested, with models and tokens, a handoff, a failed tool marked; keyboard and attributes", async () => {
      const { wb } = suite;
      await wb.openSidebar();
      await importTraces('run.otlp.json', 'Imported 7 spans.');

      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      await f.locator('.turn-row[data-turn="3"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      await f.locator('.timeline-section > summary').click();
      const rows = f.locator('.span-row');
      await rows.nth(6).waitFor({ timeout: 20_000 });
      assert.equal(await rows.count(), 7);
      // The view redraws an open Timeline when the trace store changes (the import just made): read the rows once they
      // hold still, so a redraw between two reads is not taken for an empty timeline.
      const kinds = () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
      assert.deepEqual(await steady(kinds), ['agent', 'guardrail', 'model', 'handoff', 'tool', 'tool', 'model']);
      assert.match((await f.locator('.timeline-summary').textContent()) ?? '', /4,300 ms in all · 2 model requests · 1 failed/);
      // The model is in the name already ("chat gpt-4.1"): the detail adds the tokens.
      assert.equal(await rows.nth(2).locator('.span-label').textContent(), 'chat gpt-4.1');
      assert.equal(await rows.nth(2).locator('.span-detail').textContent(), '812 in / 64 out');
      assert.equal(await rows.nth(5).locator('.span-error').textContent(), 'failed');
      assert.equal(await rows.nth(5).locator('.span-bar.failed').count(), 1);
      // Children are indented under the run.
      const indent = await steady(() =>
        rows.evaluateAll((els) => els.map((e) => e.querySelector('.span-name')?.getAttribute('style') ?? '')),
      );
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

    it('shows latency per turn and p50/p95, links an unlinked trace by hand (the open Timeline redraws), the Tokens table and compare deltas', async () => {
      const { wb } = suite;
      await wb.openSidebar();
      // The run again (this test stands without the one before: the same spans replace themselves), and two more
      // traces through the OTLP receiver, as an agent running elsewhere sends them.
      await importTraces('run.otlp.json', 'Imported 7 spans.');
      await wb.runCommand('Agent Sessions: Start OTLP Trace Receiver');
      await wb.runCommand('Notifications: Show Notifications');
      await wb.page
        .locator('.notifications-center .notification-list-item', { hasText: `Receiving OTLP traces at http://127.0.0.1:${port}` })
        .first()
        .waitFor({ timeout: 20_000 });
      await wb.page.keyboard.press('Escape');
      const sent = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: readFileSync(join(suite.workspace, 'more.otlp.json')),
      });
      assert.equal(sent.status, 200, await sent.text());
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      await f.locator('.turn-row[data-turn="3"] .turn-latency', { hasText: '4.3 s · gpt-4.1' }).waitFor({ timeout: 20_000 });
      assert.equal(await f.locator('.turn-latency').count(), 1, 'only the traced turn has a figure');
      assert.match((await f.locator('.turn-row[data-turn="3"]').getAttribute('aria-label')) ?? '', /took 4\.3 s · gpt-4\.1/);
      await f.locator('.turn-latency-summary', { hasText: 'p50 4.3 s · p95 4.3 s over 1 traced turns' }).waitFor();

      // Turn 4 has no trace: its Timeline says so and offers the unlinked one, which, once linked, it draws unasked.
      await f.locator('.turn-row[data-turn="4"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 4' }).waitFor();
      if ((await f.locator('.timeline-section[open]').count()) === 0) await f.locator('.timeline-section > summary').click();
      await f.locator('.timeline-empty').waitFor({ timeout: 20_000 });
      // What each kind of run needs for a trace: a command's line names the spans event, not "runs from this view".
      assert.deepEqual(await f.locator('.timeline-hints li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-run-kind'))), [
        'built-in',
        'command',
        'elsewhere',
      ]);
      await f.locator('.timeline-hints li[data-run-kind="command"]', { hasText: 'agent-sessions.spans' }).waitFor();
      await f.locator('.link-trace').click();
      await wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: 'Link a Trace to Turn 4 of main' }).waitFor();
      await wb.page.locator('.quick-input-widget:visible .monaco-list-row', { hasText: 'nightly-eval run' }).waitFor();
      await wb.answer('nightly-eval');
      await f.locator('.span-row').nth(1).waitFor({ timeout: 20_000 });
      assert.equal(await f.locator('.span-row').count(), 2);
      await f.locator('.turn-row[data-turn="4"] .turn-latency', { hasText: '800 ms · o3' }).waitFor({ timeout: 20_000 });
      await f.locator('.turn-latency-summary', { hasText: 'p50 800 ms · p95 4.3 s over 2 traced turns' }).waitFor();
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `latency-${theme}`);

      // The Tokens table: latency and traced requests beside the stored usage.
      await f.locator('#tab-tokens').click();
      const header = f.locator('.usage-table .header-row');
      await header.locator('vscode-data-grid-cell', { hasText: 'Latency' }).waitFor({ timeout: 20_000 });
      const dataRows = f.locator('.usage-table vscode-data-grid-row:not(.header-row):not(.totals)');
      const cells: string[][] = [];
      for (let i = 0; i < (await dataRows.count()); i++)
        cells.push(await dataRows.nth(i).locator('vscode-data-grid-cell').allTextContents());
      const titles = await header.locator('vscode-data-grid-cell').allTextContents();
      const latencyAt = titles.findIndex((t) => t.startsWith('Latency'));
      const requestsAt = titles.findIndex((t) => t.startsWith('Traced requests'));
      const turnAt = titles.findIndex((t) => t.startsWith('Turn'));
      const byTurn = Object.fromEntries(cells.map((c) => [c[turnAt], [c[latencyAt], c[requestsAt]]]));
      assert.deepEqual(byTurn['3'], ['4.3 s', '2']);
      assert.deepEqual(byTurn['4'], ['800 ms', '1']);
      assert.deepEqual(byTurn['1'], ['–', '–']);
      await f.locator('#tab-conversation').click();

      // Compared with lisbon-instead: its turn 3 against main's, and the columns' p50/p95, each with its difference.
      await f.locator('.compare-branch').click();
      await wb.page.locator('.quick-input-widget:visible .quick-input-title', { hasText: 'Compare main with' }).waitFor();
      await wb.answer('lisbon-instead');
      const c = await compareViewFrame(wb, 'Compare main ↔ lisbon-instead');
      const lisbon = c.locator('.compare-row').first().locator('.compare-cell[data-column="1"] .latency-line');
      await lisbon.waitFor({ timeout: 20_000 });
      assert.equal(await lisbon.textContent(), 'took 2.1 s (\u22122.2 s) · 1 model requests');
      assert.equal(
        await c.locator('.compare-row').first().locator('.compare-cell[data-column="0"] .latency-line').textContent(),
        'took 4.3 s · 2 model requests',
      );
      const stat = c.locator('.compare-card').nth(1).locator('.latency-stat');
      await stat.waitFor({ timeout: 20_000 });
      assert.equal(await stat.textContent(), 'Latency: p50 2.1 s (+1.3 s) · p95 2.1 s (\u22122.2 s)');
      await wb.page.mouse.move(5, 5);
      await docsScreenshot(wb, `compare-latency-${theme}`);
    });

    // The trace store is the extension's, in the server's global storage, which later suites of this workbench share:
    // this suite's spans go with it, and the view shows no figure once they are gone.
    it("clears the session's traces from the tree, and the view's figures go with them", async () => {
      const { wb } = suite;
      await wb.runCommand('Agent Sessions: Stop OTLP Trace Receiver');
      await wb.openSidebar();
      await wb.treeRow('conversations.db').expand();
      await wb.treeRow('weather-trip').contextMenu('Clear Traces of Session');
      await wb.page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Clear Traces' }).click();
      await wb.runCommand('Notifications: Show Notifications');
      await wb.page
        .locator('.notifications-center .notification-list-item', { hasText: /Removed \d+ spans of session weather-trip/ })
        .first()
        .waitFor();
      await wb.page.keyboard.press('Escape');
      const f = await openConversationView(wb, 'conversations.db', 'weather-trip');
      await f.locator('.turn-row[data-turn="3"]').waitFor();
      // The latency was read (and found nothing) before its absence is looked for.
      await f.locator('.turn-latency-summary[data-read="true"]').waitFor({ state: 'attached', timeout: 20_000 });
      assert.equal(await f.locator('.turn-latency').count(), 0);
      assert.equal(await f.locator('.turn-latency-summary').textContent(), '');
    });
  });
}
