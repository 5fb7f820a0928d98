/**
 * `npm run bench:view`: how the conversation view scales. Writes a session of 10,000 turns / 40,000 items, opens
 * it in the real workbench (code-server + Chromium, packaged extension), and prints JSON: time to the first screen
 * measured inside the view (from its script start, i.e. the panel becoming ready), the wall time from the context
 * menu to the first rows, the time to reach the last turn with End, and how many row elements exist (virtualized);
 * then the last turn's Timeline with 500 spans sent to the OTLP receiver: from the view's request to the rows drawn
 * (target 150 ms).
 */
import { cpus } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../src/store';
import { freePort, projectRoot } from '../test/host/codeServer';
import { Workbench } from '../test/e2e/workbench';

const TURNS = Number(process.argv.find((a) => /^--turns=\d+$/.test(a))?.split('=')[1] ?? 10_000);
const word = (i: number): string => ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'][i % 8] as string;
const text = (n: number, seed: number): string =>
  Array.from({ length: Math.ceil(n / 6) }, (_, i) => word(seed + i))
    .join(' ')
    .slice(0, n);

async function writeSession(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'big', dbPath: path, createTables: true, synchronous: 'NORMAL' });
  try {
    for (let t = 1; t <= TURNS; t++) {
      await s.addItems([
        { role: 'user', content: `Question ${t}: ${text(200, t)}` },
        {
          type: 'function_call',
          name: 'get_weather',
          callId: `c${t}`,
          arguments: JSON.stringify({ city: 'Paris', turn: t }),
          status: 'completed',
        },
        {
          type: 'function_call_result',
          name: 'get_weather',
          callId: `c${t}`,
          status: 'completed',
          output: { type: 'text', text: text(500, t + 3) },
        },
        { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: text(400, t + 5) }] },
      ] as never);
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 1000 + t, outputTokens: 200, totalTokens: 1200 + t } } });
    }
  } finally {
    s.close();
  }
}

const TIMELINE_SPANS = 500;

/** An OTLP JSON export of one run of `TIMELINE_SPANS` spans linked to turn `turn` of main: a root and its steps. */
function timelineSpans(turn: number): string {
  const t0 = BigInt(Date.now()) * 1_000_000n;
  const id = (i: number): string => (i + 1).toString(16).padStart(16, '0');
  const spans = Array.from({ length: TIMELINE_SPANS }, (_, i) => ({
    traceId: 'a'.repeat(31) + '1',
    spanId: id(i),
    ...(i > 0 ? { parentSpanId: id(0) } : {}),
    name: i === 0 ? 'invoke_agent Bench' : i % 2 ? `chat gpt-4.1 #${i}` : `execute_tool lookup #${i}`,
    startTimeUnixNano: String(t0 + BigInt(i) * 5_000_000n),
    endTimeUnixNano: String(t0 + BigInt(i === 0 ? TIMELINE_SPANS * 5 : i * 5 + 4) * 1_000_000n),
    attributes: [
      { key: 'gen_ai.operation.name', value: { stringValue: i === 0 ? 'invoke_agent' : i % 2 ? 'chat' : 'execute_tool' } },
      ...(i === 0
        ? [
            { key: 'agent_sessions.session_id', value: { stringValue: 'big' } },
            { key: 'agent_sessions.branch_id', value: { stringValue: 'main' } },
            { key: 'agent_sessions.turn_number', value: { intValue: String(turn) } },
          ]
        : []),
    ],
  }));
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] });
}

async function main(): Promise<void> {
  const root = projectRoot();
  const workspace = mkdtempSync(join(tmpdir(), 'asi-bench-view-'));
  const db = join(workspace, 'big.db');
  const t0 = Date.now();
  await writeSession(db);
  const writeMs = Date.now() - t0;
  const receiverPort = await freePort();
  const wb = await Workbench.open({
    folder: workspace,
    installVsix: [join(root, 'dist', 'agent-session-inspector.vsix')],
    settings: { 'agentSessions.traces.receiver.port': receiverPort },
  });
  try {
    await wb.openSidebar();
    await wb.treeRow('big.db').expand();
    const opened = Date.now();
    await wb.treeRow('big').contextMenu('Open Conversation View');
    const host = wb.page.locator('iframe.webview.ready').last();
    await host.waitFor({ state: 'attached', timeout: 60_000 });
    const outer = await (await host.elementHandle())!.contentFrame();
    const innerEl = outer!.locator('iframe#active-frame');
    await innerEl.waitFor({ state: 'attached', timeout: 60_000 });
    const frame = (await (await innerEl.elementHandle())!.contentFrame())!;
    await frame.locator('.turn-row').first().waitFor({ timeout: 60_000 });
    const wallFirstRowsMs = Date.now() - opened;
    await frame.locator('#app[data-first-screen-ms]').waitFor({ state: 'attached' });
    const firstScreenMs = Number(await frame.locator('#app').getAttribute('data-first-screen-ms'));
    const rowsInDom = await frame.locator('.turn-row').count();
    await frame.locator('.turn-list').focus();
    const endStart = Date.now();
    await frame.locator('.turn-list').press('End');
    await frame.locator(`.turn-row[data-turn="${TURNS}"]`).waitFor({ timeout: 120_000 });
    const endMs = Date.now() - endStart;
    await frame.locator('.turn-title', { hasText: `Turn ${TURNS}` }).waitFor({ timeout: 60_000 });
    const rowsAtEnd = await frame.locator('.turn-row').count();
    // The last turn's Timeline with TIMELINE_SPANS spans, sent to the receiver as an agent elsewhere would.
    await wb.runCommand('Agent Sessions: Start OTLP Trace Receiver');
    const url = `http://127.0.0.1:${receiverPort}/v1/traces`;
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: timelineSpans(TURNS) }).catch(
        () => undefined,
      );
      if (res?.status === 200) break;
      if (attempt > 50) throw new Error(`the receiver did not take the spans: ${res?.status ?? 'not listening'}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await frame.locator('.timeline-section > summary').click();
    await frame.locator('.timeline-body[data-drawn-ms]').waitFor({ timeout: 60_000 });
    const timelineDrawnMs = Number(await frame.locator('.timeline-body').getAttribute('data-drawn-ms'));
    const timelineRows = await frame.locator('.span-row').count();
    const result = {
      machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version },
      turns: TURNS,
      items: TURNS * 4,
      writeSessionMs: writeMs,
      firstScreenMsInView: firstScreenMs,
      firstScreenTargetMs: 500,
      firstScreenWithinTarget: firstScreenMs < 500,
      wallMsFromContextMenuToFirstRows: wallFirstRowsMs,
      rowElementsOnFirstScreen: rowsInDom,
      msToReachLastTurnWithEnd: endMs,
      rowElementsAtEnd: rowsAtEnd,
      timelineSpans: timelineRows,
      timelineDrawnMsAfterRequest: timelineDrawnMs,
      timelineTargetMs: 150,
      timelineWithinTarget: timelineDrawnMs <= 150 && timelineRows === TIMELINE_SPANS,
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await wb.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
