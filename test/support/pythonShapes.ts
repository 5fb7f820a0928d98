/**
 * Maps the TypeScript API's results to the shapes the Python conformance files record (spec §10.4), so a test can
 * compare them including key order. Timestamps are masked as in the files.
 */
import type { BranchInfo, ConversationTurn, SessionUsage, ToolUsage, TurnItem, TurnUsage, TurnUsageRow } from '../../src/store';
import { MASK } from './tableDump';

const mask = (v: string | null): string | null => (v === null ? null : MASK);

export const py = {
  branches: (list: BranchInfo[]) =>
    list.map((b) => ({
      branch_id: b.branchId,
      message_count: b.messageCount,
      user_turns: b.userTurns,
      is_current: b.isCurrent,
      created_at: mask(b.createdAt),
    })),
  sessionUsage: (u: SessionUsage | null) =>
    u && {
      requests: u.requests,
      input_tokens: u.inputTokens,
      output_tokens: u.outputTokens,
      total_tokens: u.totalTokens,
      total_turns: u.totalTurns,
    },
  turns: (list: ConversationTurn[]) =>
    list.map((t) => ({
      turn: t.turn,
      content: t.content,
      full_content: t.fullContent,
      timestamp: mask(t.timestamp),
      can_branch: t.canBranch,
    })),
  byTurns: (map: Map<number | null, TurnItem[]>) =>
    Object.fromEntries([...map].map(([k, v]) => [String(k), v.map((i) => ({ type: i.type, tool_name: i.toolName }))])),
  toolUsage: (list: ToolUsage[]) => list.map((t) => [t.toolName, t.count, t.turn]),
  turnUsage: (u: TurnUsage | Record<string, never>) =>
    'requests' in u
      ? {
          requests: u.requests,
          input_tokens: u.inputTokens,
          output_tokens: u.outputTokens,
          total_tokens: u.totalTokens,
          input_tokens_details: u.inputTokensDetails,
          output_tokens_details: u.outputTokensDetails,
        }
      : {},
  turnUsageRows: (rows: TurnUsageRow[]) => rows.map((r) => ({ user_turn_number: r.userTurnNumber, ...py.turnUsage(r) })),
};
