/**
 * The settle step every kind of run shares, once its agent is done: the branch put right by the rules of
 * runPersistence.ts (an unanswered call removed, a run that failed without spending rolled back, a fork that kept
 * nothing deleted), then the run's turn and usage found, then what it left said for people (runSummary.ts). How the
 * written items, the turn and the usage are known is each kind's own: the SDK runner records its writes and stores
 * the usage itself (runSettlement.ts), an agent command reads what landed (command/commandRun.ts). Loads no agent SDK.
 */
import type { AgentInputItem } from '@openai/agents';
import type { RunPersistenceView, RunUsageView } from '../shared/protocol/runEvents';
import { isUserMessage, settleBranch, type SettleResult } from './runPersistence';
import type { RunReporter } from './runReporter';
import { persistenceView, type Produced } from './runSummary';
import type { RunSession } from './runSession';

/** How a run ended, as settling it needs to know. */
export interface RunEnd {
  /** The run completed (the runner's result, or the agent's end and nothing written elsewhere). */
  completed: boolean;
  /** The run used tokens: a run that did not complete keeps its user message only then. */
  spent: boolean;
  /** What the run wrote on its branch, oldest first: the only items settling may remove. */
  written: readonly AgentInputItem[];
  /**
   * Set when `written` is not known to be the run's alone (an agent command's turn whose user message is not the one
   * the run gave: command/commandRun.ts): why. Then nothing is removed, and the summary says so.
   */
  unproven?: string;
  /** The fork made for the run; `exists` is false when an agent was to make it and did not. */
  fork: { branchId: string; exists: boolean } | undefined;
  /**
   * The run paused, waiting for input (an agent command's RUN_FINISHED with outcome `interrupt`): it neither
   * completed nor failed, and what it wrote stays, the call it waits on included (runPersistence.ts `settleRun`).
   */
  paused?: boolean;
  /** What the run's events showed (to say what was not saved). */
  produced: Produced;
  /** What the store logged instead of throwing. */
  storeProblems: readonly string[];
  /** A write of the run failed, so nothing of it was stored. */
  writeFailed: boolean;
}

/** The run's turn and usage once the branch is right. */
export interface TurnRecord {
  turn: number | null;
  usageStored: boolean;
  usage: RunUsageView | null;
}

export interface SettledRun {
  settled: SettleResult;
  record: TurnRecord;
  persistence: RunPersistenceView;
}

/**
 * Puts the branch right, then asks `recordTurn` for the turn and usage (`keptUser`: the run's user message is still
 * on the branch; `kept`: the run's items left there), and describes what the run left. Never throws for the branch:
 * a cleanup that could not finish is in the summary.
 */
export async function settleAndDescribe(
  session: RunSession,
  reporter: RunReporter,
  end: RunEnd,
  recordTurn: (keptUser: boolean, kept: readonly AgentInputItem[]) => Promise<TurnRecord>,
): Promise<SettledRun> {
  const { completed, spent } = end;
  const { forkDeleted, ...settled } = await settleBranch(
    session,
    end.written,
    { completed, spent, paused: end.paused ?? false },
    end.fork,
    end.unproven,
  );
  const record = await recordTurn(settled.kept.some(isUserMessage), settled.kept);
  const persistence = persistenceView({
    reporter,
    storeProblems: end.storeProblems,
    settled,
    produced: end.produced,
    turn: record.turn,
    usageStored: record.usageStored,
    completed,
    usage: record.usage,
    spent,
    writeFailed: end.writeFailed,
    forkDeleted,
  });
  return { settled, record, persistence };
}
