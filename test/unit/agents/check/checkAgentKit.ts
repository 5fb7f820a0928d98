/**
 * Helpers for the check's tests: a reviewed session (turns with recorded tool calls, as the Python SDK stores them, and
 * a review store with good and bad verdicts, a correction and an orphan), a scripted agent command — a real child
 * process that reads the `RunAgentInput`, answers each user message by the plan it was written with (honouring the
 * replay table as an agent should), writes its turn through our store and prints AG-UI events — and two small graders
 * of the tests' own (the real ones are src/agents/check/graders/).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import type { CaseRun, CheckCase, Grader, GraderResult } from '../../../../src/agents/check/checkTypes';
import { REPO } from '../command/commandKit';

const assistant = (text: string) => ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] });
const call = (id: string, name: string, args: string) => ({
  type: 'function_call',
  call_id: id,
  name,
  arguments: args,
  status: 'completed',
});
const output = (id: string, out: string) => ({ type: 'function_call_output', call_id: id, output: out });

/** The conversation of session `s1` on `main`: [user text, items after it]. */
export const TURNS: [string, unknown[]][] = [
  ['Hello', [assistant('Hi.')]],
  [
    'Weather in Paris?',
    [call('c_paris', 'get_weather', '{"city": "Paris"}'), output('c_paris', 'Paris: 18°C, sunny'), assistant('Sunny in Paris, 18°C.')],
  ],
  [
    'Weather in Lyon?',
    [call('c_lyon', 'get_weather', '{"city":"Lyon"}'), output('c_lyon', 'Lyon: 12°C, rain'), assistant('Rain in Lyon, 12°C.')],
  ],
  ['Mail Ana the forecast', [call('c_mail', 'send_email', '{"to":"ana@example.com"}'), output('c_mail', 'sent'), assistant('Done!!')]],
];

export const user = (text: string) => ({ role: 'user', content: text });
export const turnKey = (text: string): string => contentKey(user(text));

/** Every item a session file holds for `sessionId`, as the store reads them back. */
export async function storedItems(dbPath: string, sessionId = 's1'): Promise<unknown[]> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath, readonly: true });
  try {
    return await s.getStoredItems();
  } finally {
    s.close();
  }
}

/** Writes `TURNS` to a new session file (session `s1`, branch `main`, turns 1…4). */
export async function seedCheckSession(dbPath: string, sessionId = 's1'): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath, createTables: true });
  try {
    for (const [q, rest] of TURNS) await s.addItems([user(q), ...rest] as never);
  } finally {
    s.close();
  }
}

/**
 * The review store: turns 2 and 3 good (tagged `weather`), turn 4 bad with a correction, turn 1 bad without one
 * (no case), and a good review of a turn 9 that does not exist (orphaned).
 */
export async function seedReviews(path: string, dbPath: string, sessionId = 's1'): Promise<void> {
  // The corrected answer's key is of the item as stored (the store writes it in the Python SDK's shape).
  const s = new AdvancedSQLiteSession({ sessionId, dbPath, readonly: true });
  const answer = (await s.getTurnStoredItems(4)).find((i) => (i as { role?: string }).role === 'assistant');
  s.close();
  const r = ReviewStore.open(path);
  try {
    const ref = (turn: number, text: string) => ({ sessionId, branchId: 'main', turn, turnKey: turnKey(text) });
    r.setTurnReview(ref(1, 'Hello'), { verdict: 'bad', note: 'too short' });
    r.setTurnReview(ref(2, 'Weather in Paris?'), { verdict: 'good', tags: ['weather'] });
    r.setTurnReview(ref(3, 'Weather in Lyon?'), { verdict: 'good', tags: ['weather'] });
    r.setTurnReview(ref(4, 'Mail Ana the forecast'), { verdict: 'bad', tags: ['tone'] });
    r.setCorrection({ ...ref(4, 'Mail Ana the forecast'), itemKey: contentKey(answer), text: 'I sent Ana the forecast.' });
    r.setTurnReview(ref(9, 'Gone'), { verdict: 'good' });
  } finally {
    r.close();
  }
}

/** How the scripted agent answers a user message: its calls (outputs replayed when the table has them) and its answer. */
export interface Reply {
  calls?: { name: string; arguments: string }[];
  answer: string;
  /** Wait this long before answering (ms). */
  delayMs?: number;
  /** Never answer (until stopped). */
  hang?: boolean;
  /** Items stored after the calls as they are (hosted and MCP calls, which the agent does not stream). */
  raw?: unknown[];
  /** Store no answer and stream none: the turn holds only the user message (and `raw`). */
  noAnswer?: boolean;
}

/** Replies to `TURNS`' messages as they were recorded: what a faithful agent does. */
export const FAITHFUL: Record<string, Reply> = {
  'Weather in Paris?': { calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }], answer: 'Sunny in Paris, 18°C.' },
  'Weather in Lyon?': { calls: [{ name: 'get_weather', arguments: '{"city":"Lyon"}' }], answer: 'Rain in Lyon, 12°C.' },
  'Mail Ana the forecast': { calls: [{ name: 'send_email', arguments: '{"to":"ana@example.com"}' }], answer: 'I sent Ana the forecast.' },
};

/**
 * Writes the scripted agent to `dir` and returns its command line (run from the repository, which has `tsx`). With
 * `trace`, each run appends `start <ms>` and `end <ms>` lines to that file.
 */
export function checkAgent(dir: string, name: string, replies: Record<string, Reply>, trace?: string): string {
  const path = join(dir, `${name}.mjs`);
  const store = pathToFileURL(join(REPO, 'src/store/index.ts')).href;
  writeFileSync(
    path,
    `import { appendFileSync } from 'node:fs';
import { AdvancedSQLiteSession } from ${JSON.stringify(store)};
const replies = ${JSON.stringify(replies)};
const trace = ${JSON.stringify(trace ?? null)};
if (trace) appendFileSync(trace, 'start ' + Date.now() + '\\n');
let text = '';
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
const props = input.forwardedProps.agentSessions;
const tools = props.tools ?? { mode: 'live', recorded: [], nameOnly: [] };
const emit = (e) => console.log(JSON.stringify(e));
const question = input.messages[0].content;
const reply = replies[question] ?? { answer: 'I do not know.' };
emit({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
process.on('SIGINT', () => { emit({ type: 'RUN_ERROR', message: 'interrupted', code: 'cancelled' }); process.exit(130); });
if (reply.hang) await new Promise(() => setInterval(() => {}, 1000));
if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
const canonical = (t) => { try { return JSON.stringify(sortKeys(JSON.parse(t))); } catch { return t; } };
const sortKeys = (v) => Array.isArray(v) ? v.map(sortKeys) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v;
const used = new Set();
const s = new AdvancedSQLiteSession({ sessionId: props.sessionId, dbPath: props.store.path, sessionsTable: props.store.sessionsTable, messagesTable: props.store.messagesTable });
if (props.fork) await s.createBranchFromTurn(props.fork.fromTurn, props.branchId);
else if (props.branchId !== 'main') await s.switchToBranch(props.branchId);
const items = [...props.input];
(reply.calls ?? []).forEach((c, i) => {
  const callId = 'call_new_' + (i + 1);
  const hit = tools.mode === 'live' ? undefined : tools.recorded.find((r) => !used.has(r.callId) && r.hasOutput && r.name === c.name && canonical(r.arguments) === canonical(c.arguments));
  let output = c.name + ' ran live';
  if (hit) { used.add(hit.callId); output = hit.output; }
  emit({ type: 'TOOL_CALL_START', toolCallId: callId, toolCallName: c.name });
  emit({ type: 'TOOL_CALL_ARGS', toolCallId: callId, delta: c.arguments });
  emit({ type: 'TOOL_CALL_END', toolCallId: callId });
  emit({ type: 'CUSTOM', name: 'agent-sessions.tool-replay', value: { callId, name: c.name, outcome: hit ? 'replayed' : 'live', recordedCallId: hit ? hit.callId : null } });
  emit({ type: 'TOOL_CALL_RESULT', messageId: 'm' + i, toolCallId: callId, content: output });
  items.push({ type: 'function_call', call_id: callId, name: c.name, arguments: c.arguments, status: 'completed' });
  items.push({ type: 'function_call_output', call_id: callId, output });
});
items.push(...(reply.raw ?? []));
if (!reply.noAnswer) {
  items.push({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: reply.answer }] });
  emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'answer', delta: reply.answer });
}
await s.addItems(items);
await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 30, outputTokens: 10, totalTokens: 40 } } });
s.close();
if (trace) appendFileSync(trace, 'end ' + Date.now() + '\\n');
emit({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
`,
  );
  return `"${process.execPath}" --no-warnings --import tsx "${path}"`;
}

/** The tests' own graders: the tool names in order (of a case that expects calls), and the answer exactly. */
export const TEST_GRADERS: Grader[] = [
  {
    name: 'tools',
    // As the trajectory graders: no result on a case that expects no calls (a bad turn's).
    grade(c: CheckCase, run: CaseRun): Promise<GraderResult | null> {
      if (c.expected.trajectory === null) return Promise.resolve(null);
      const want = c.expected.trajectory.map((t) => t.name).join(',');
      const got = run.trajectory.map((t) => t.name).join(',');
      return Promise.resolve({
        grader: 'tools',
        pass: want === got,
        score: want === got ? 1 : 0,
        reason: `expected [${want}], got [${got}]`,
      });
    },
  },
  {
    name: 'answer',
    grade(c: CheckCase, run: CaseRun): Promise<GraderResult> {
      const pass = run.answer === c.expected.answer;
      return Promise.resolve({
        grader: 'answer',
        pass,
        score: pass ? 1 : 0,
        reason: `expected ${JSON.stringify(c.expected.answer)}, got ${JSON.stringify(run.answer)}`,
      });
    },
  },
];
