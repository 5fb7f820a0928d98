/**
 * Every kind of write a session file sees, as the kept-totals differential suite replays them (in this process and
 * from another one, keptTotalsWriter.ts). Each works on session `s1` as `seedKeptTotals` left it and on what the
 * writes before it left, in the order listed.
 */
import { Usage, type AgentInputItem } from '@openai/agents';
import type { AdvancedSQLiteSession } from '../../src/store';

let counter = 0;
const call = (callId: string, name: string): AgentInputItem =>
  ({ type: 'function_call', callId, name, status: 'completed', arguments: '{}' }) as AgentInputItem;
const output = (callId: string): AgentInputItem =>
  ({ type: 'function_call_result', callId, name: 'x', status: 'completed', output: 'ok' }) as AgentInputItem;
const user = (text: string): AgentInputItem => ({ role: 'user', content: text }) as AgentInputItem;
const assistant = (text: string): AgentInputItem =>
  ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] }) as AgentInputItem;
const usage = (tokens: number) => ({
  state: {
    usage: new Usage({
      requests: 1,
      inputTokens: tokens,
      outputTokens: 2,
      totalTokens: tokens + 2,
      inputTokensDetails: [{ cached_tokens: tokens % 7 }],
      outputTokensDetails: [{ reasoning_tokens: tokens % 5 }],
    }),
  },
});

/** One turn with a call of `tool` on the current branch, and its usage. */
export async function turnWithTool(s: AdvancedSQLiteSession, tool: string, tokens = 10): Promise<void> {
  const id = `c${++counter}_${process.pid}`;
  await s.addItems([user(`ask ${id}`), call(id, tool), output(id), assistant(`answer ${id}`)]);
  await s.storeRunUsage(usage(tokens));
}

/** main: 4 turns (two tools), alt from turn 3 with one turn of its own, side from alt's turn 2; back on main. */
export async function seedKeptTotals(s: AdvancedSQLiteSession): Promise<void> {
  for (let t = 1; t <= 4; t++) await turnWithTool(s, t % 2 === 0 ? 'search' : 'lookup', 10 * t);
  await s.createBranchFromTurn(3, 'alt');
  await turnWithTool(s, 'refund', 70);
  await s.createBranchFromTurn(2, 'side');
  await turnWithTool(s, 'search', 80);
  await s.switchToBranch('main');
}

export const keptTotalsWrites = {
  /** A run's turn appended (items, then usage): what the kept totals must fold in without recomputing. */
  append: (s: AdvancedSQLiteSession) => turnWithTool(s, 'lookup', 33),
  /** Items without usage yet (a run that failed before storing it). */
  appendItemsOnly: async (s: AdvancedSQLiteSession) => {
    const id = `c${++counter}_${process.pid}`;
    await s.addItems([user(`half ${id}`), call(id, 'new_tool')]);
  },
  /** That turn's usage, stored later. */
  usageLate: (s: AdvancedSQLiteSession) => s.storeRunUsage(usage(5)),
  /** The same turn's usage stored again (INSERT OR REPLACE: the old row goes, a new id comes). */
  usageAgain: (s: AdvancedSQLiteSession) => s.storeRunUsage(usage(6)),
  appendOnAlt: async (s: AdvancedSQLiteSession) => {
    await s.switchToBranch('alt');
    await turnWithTool(s, 'refund', 44);
  },
  popItem: async (s: AdvancedSQLiteSession) => {
    await s.popItem();
  },
  branchFromTurn: async (s: AdvancedSQLiteSession) => {
    await s.createBranchFromTurn(2, `b${++counter}`);
    await turnWithTool(s, 'lookup', 12);
  },
  branchFromContent: async (s: AdvancedSQLiteSession) => {
    await s.createBranchFromContent('ask', `bc${++counter}`);
  },
  /** The replacement calls another tool, so the totals move without any row count changing. */
  historyMutation: async (s: AdvancedSQLiteSession) => {
    await s.switchToBranch('main');
    const items = await s.getItems();
    const callId = items
      .map((i) => i as { type?: string; callId?: string })
      .reverse()
      .find((i) => i.type === 'function_call')?.callId;
    if (!callId) throw new Error('no function call to replace');
    await s.applyHistoryMutations({
      mutations: [{ type: 'replace_function_call', callId, replacement: call(callId, 'renamed') as never }],
    });
  },
  historyTransaction: async (s: AdvancedSQLiteSession) => {
    await s.applyHistoryTransaction({
      operationId: `op${++counter}`,
      transaction: { type: 'append_items', items: [user('via transaction'), call(`t${counter}`, 'search')] },
    });
  },
  compaction: async (s: AdvancedSQLiteSession) => {
    await s.replaceHistoryWithCompaction([user('compacted'), { type: 'compaction', encrypted_content: 'x' } as AgentInputItem]);
  },
  deleteBranch: async (s: AdvancedSQLiteSession) => {
    await s.switchToBranch('main');
    await s.deleteBranch('side', true);
  },
  clearCurrentBranch: async (s: AdvancedSQLiteSession) => {
    await s.switchToBranch('alt');
    await s.clearCurrentBranch();
  },
  clearSession: (s: AdvancedSQLiteSession) => s.clearSession(),
} satisfies Record<string, (s: AdvancedSQLiteSession) => Promise<void>>;

export type KeptTotalsWrite = keyof typeof keptTotalsWrites;
