/**
 * Helpers for the replay tests of agent commands: a session whose turn 2 has recorded tool calls (as the Python SDK
 * stores them), and a scripted agent command — a real child process that reads the `RunAgentInput`, writes its turn
 * through our store and prints AG-UI events — whose calls, outputs and reports each test plans.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { REPO } from './commandKit';

/** The recorded turn 2: two weather calls, an e-mail, and a web search the provider ran. */
export const RECORDED = {
  paris: { call_id: 'call_paris', name: 'get_weather', arguments: '{"city": "Paris"}', output: 'Paris: 18°C, sunny' },
  lyon: { call_id: 'call_lyon', name: 'get_weather', arguments: '{"city":"Lyon"}', output: 'Lyon: 12°C, rain' },
  email: { call_id: 'call_email', name: 'send_email', arguments: '{"to":"ana@example.com","at":"2026-12-01T10:00:00Z"}', output: 'sent' },
};

/** Turn 1 (no tools), turn 2 with the recorded calls, turn 3 (no tools), in the stored (Python SDK) shape. */
export async function seedRecordedSession(dbPath: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, createTables: true });
  const call = (c: { call_id: string; name: string; arguments: string }) => ({ type: 'function_call', ...c, status: 'completed' });
  const output = (c: { call_id: string; output: string }) => ({ type: 'function_call_output', call_id: c.call_id, output: c.output });
  const assistant = (text: string) => ({
    role: 'assistant',
    type: 'message',
    status: 'completed',
    content: [{ type: 'output_text', text }],
  });
  try {
    await s.addItems([{ role: 'user', content: 'Hello' }, assistant('Hi.')] as never);
    await s.addItems([
      { role: 'user', content: 'Weather in Paris and Lyon, then mail Ana.' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather' } },
      call(RECORDED.paris),
      call(RECORDED.lyon),
      output(RECORDED.paris),
      output(RECORDED.lyon),
      call(RECORDED.email),
      output(RECORDED.email),
      assistant('Paris is sunny, Lyon rainy; Ana is told.'),
    ] as never);
    await s.addItems([{ role: 'user', content: 'Thanks' }, assistant('You are welcome.')] as never);
  } finally {
    s.close();
  }
}

/** One call the scripted agent makes. */
export interface PlannedCall {
  name: string;
  arguments: string;
  /**
   * `replay`: honour the input's replay table as an agent should (the recorded output of the first unused recorded
   * call with this name and JSON-equal arguments, reported `replayed`; a live output and `live` when none). A string:
   * that output, written as is. `refuse`: what strict asks of an unmatched call — report it `unmatched`, store what
   * was written so far (and the usage), send RUN_ERROR naming the call, exit 1, and never run it.
   */
  output: 'replay' | 'refuse' | string;
  /** What to report instead of the honest report (`none`: no report); `recordedCallId` with it. */
  report?: { outcome: string; recordedCallId: string | null } | 'none';
}

export interface AgentPlan {
  calls: PlannedCall[];
  /** Reports of calls never written. */
  extraReports?: { callId: string; name: string; outcome: string; recordedCallId: string | null }[];
  /** Other CUSTOM tool-replay values sent as is (invalid ones). */
  rawReports?: unknown[];
  /** Store a usage row for the turn (the run spent tokens). */
  storeUsage?: boolean;
  /** Where to copy the RunAgentInput it received. */
  inputCopy?: string;
  /** Its answer, written and streamed (default "Done."). */
  answer?: string;
}

/**
 * Writes the scripted agent to `dir` and returns its command line (run from the repository, which has `tsx`): it
 * writes its turn through our store — the user message, each planned call and its output, the answer — and prints
 * TOOL_CALL_* events, its tool-replay reports (before each result, as the protocol asks) and RUN_FINISHED.
 */
export function scriptedAgent(dir: string, plan: AgentPlan): string {
  const path = join(dir, 'scripted-agent.mjs');
  const store = pathToFileURL(join(REPO, 'src/store/index.ts')).href;
  writeFileSync(
    path,
    `import { writeFileSync } from 'node:fs';
import { AdvancedSQLiteSession } from ${JSON.stringify(store)};
const plan = ${JSON.stringify(plan)};
let text = '';
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
if (plan.inputCopy) writeFileSync(plan.inputCopy, text);
const props = input.forwardedProps.agentSessions;
const tools = props.tools ?? { mode: 'live', recorded: [], nameOnly: [] };
const emit = (e) => console.log(JSON.stringify(e));
const canonical = (t) => { try { return JSON.stringify(sortKeys(JSON.parse(t))); } catch { return t; } };
const sortKeys = (v) => Array.isArray(v) ? v.map(sortKeys) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v;
const used = new Set();
const s = new AdvancedSQLiteSession({ sessionId: props.sessionId, dbPath: props.store.path });
if (props.branchId !== 'main') await s.switchToBranch(props.branchId);
emit({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
const items = [{ role: 'user', content: input.messages[0].content }];
const finish = async () => {
  await s.addItems(items);
  if (plan.storeUsage) await s.storeRunUsage({ state: { usage: { requests: 2, inputTokens: 30, outputTokens: 9, totalTokens: 39 } } });
  s.close();
};
for (const [i, c] of plan.calls.entries()) {
  const callId = 'call_new_' + (i + 1);
  if (c.output === 'refuse') {
    emit({ type: 'TOOL_CALL_START', toolCallId: callId, toolCallName: c.name });
    emit({ type: 'TOOL_CALL_ARGS', toolCallId: callId, delta: c.arguments });
    emit({ type: 'TOOL_CALL_END', toolCallId: callId });
    emit({ type: 'CUSTOM', name: 'agent-sessions.tool-replay', value: { callId, name: c.name, outcome: 'unmatched', recordedCallId: null } });
    await finish();
    emit({ type: 'RUN_ERROR', message: 'Strict replay: ' + c.name + '(' + c.arguments + ') matches no recorded call; it was not run.' });
    process.exit(1);
  }
  let output = c.output;
  let report = { callId, name: c.name, outcome: 'live', recordedCallId: null };
  if (c.output === 'replay') {
    const hit = tools.mode === 'live' ? undefined : tools.recorded.find((r) => !used.has(r.callId) && r.hasOutput && r.name === c.name &&
      (tools.nameOnly.includes(c.name) || canonical(r.arguments) === canonical(c.arguments)));
    if (hit) { used.add(hit.callId); output = hit.output; report = { ...report, outcome: 'replayed', recordedCallId: hit.callId }; }
    else output = c.name + ' ran live';
  }
  if (c.report && c.report !== 'none') report = { ...report, ...c.report };
  emit({ type: 'TOOL_CALL_START', toolCallId: callId, toolCallName: c.name });
  emit({ type: 'TOOL_CALL_ARGS', toolCallId: callId, delta: c.arguments });
  emit({ type: 'TOOL_CALL_END', toolCallId: callId });
  if (c.report !== 'none') emit({ type: 'CUSTOM', name: 'agent-sessions.tool-replay', value: report });
  emit({ type: 'TOOL_CALL_RESULT', messageId: 'm' + i, toolCallId: callId, content: typeof output === 'string' ? output : JSON.stringify(output) });
  items.push({ type: 'function_call', call_id: callId, name: c.name, arguments: c.arguments, status: 'completed' });
  items.push({ type: 'function_call_output', call_id: callId, output });
}
for (const r of plan.extraReports ?? []) emit({ type: 'CUSTOM', name: 'agent-sessions.tool-replay', value: r });
for (const v of plan.rawReports ?? []) emit({ type: 'CUSTOM', name: 'agent-sessions.tool-replay', value: v });
const answer = plan.answer ?? 'Done.';
items.push({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: answer }] });
emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'answer', delta: answer });
await finish();
emit({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
`,
  );
  return `"${process.execPath}" --no-warnings --import tsx "${path}"`;
}
