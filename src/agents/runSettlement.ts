/**
 * Settling a run once the runner is done: the branch put right (runPersistence.ts says what is kept), a fork that
 * kept nothing deleted, the usage stored on this run's turn, and the outcome that says what was written.
 */
import type { AgentInputItem, Agent, AgentOutputType, StreamedRunResult } from '@openai/agents';
import { BranchError } from '../store';
import type { RunOutcome, RunPersistenceView, RunUsageView } from '../shared/protocol/runEvents';
import { itemLabel, runValueText, toolName } from '../shared/itemText';
import { errorMessage } from '../shared/errorMessage';
import type { RunOnBranchOptions } from './runOptions';
import { classify } from './runFailures';
import { itemKey, settleRun, type RecordingSession, type SettleResult } from './runPersistence';
import type { PreparedRun } from './runPreparation';
import type { RunReporter } from './runReporter';

export type StreamResult = StreamedRunResult<unknown, Agent<unknown, AgentOutputType>>;

/** What the run produced, tracked from its events (to say what was not saved). */
export class Produced {
  items: AgentInputItem[] = [];
  /** Text of the response being streamed, not yet part of a message item. */
  pendingText = '';
  toolNames = new Map<string, string>();
}

/** The runner's part of a run: its result (when it started), the error it ended with, and what it wrote. */
export interface StreamedRun {
  result: StreamResult | undefined;
  error: unknown;
  produced: Produced;
  recording: RecordingSession;
}

/** Puts the branch right, stores the usage, and reports the outcome (also returned). */
export async function settleAndReport(
  options: RunOnBranchOptions,
  reporter: RunReporter,
  prepared: PreparedRun,
  streamed: StreamedRun,
): Promise<RunOutcome> {
  const { session } = prepared;
  const { result, error, produced, recording } = streamed;
  const cancelled = (options.signal?.aborted ?? false) || (result?.cancelled ?? false);
  const interruptions = result && error === undefined ? result.interruptions : [];
  const completed = error === undefined && !!result && interruptions.length === 0 && (!cancelled || result.finalOutput !== undefined);
  const usage = result ? usageView(result.state.usage) : null;
  const spent = usage !== null && (usage.requests > 0 || usage.totalTokens > 0);

  const written = recording.writtenItems();
  let settled: SettleResult;
  try {
    settled = await settleRun(session, written, { completed, spent });
  } catch (err) {
    settled = { kept: written, removed: [], problem: `checking the branch failed (${errorMessage(err)})` };
  }
  // A branch forked for this run that ends up with nothing of it goes too: it was part of the run. (Its name
  // stays used, as every branch name does; a branch forked at turn 1 has no rows left to delete.)
  let forkDeleted = false;
  if (options.fork && settled.kept.length === 0 && !settled.problem) {
    try {
      await session.deleteBranch(reporter.branchId, true);
      forkDeleted = true;
    } catch (err) {
      if (!(err instanceof BranchError && /does not exist/.test(err.message))) {
        settled = { ...settled, problem: `deleting the branch made for this run failed (${errorMessage(err)})` };
      } else forkDeleted = true;
    }
  }

  // Usage goes on the branch's latest user turn: only call it when that turn is this run's, or it would replace
  // the usage of the turn before.
  const keptUser = settled.kept.some((i) => 'role' in i && i.role === 'user');
  let usageStored = false;
  if (result && keptUser) {
    const before = prepared.storeProblems.length;
    await session.storeRunUsage(result);
    usageStored = prepared.storeProblems.length === before;
  }
  let turn: number | null = null;
  if (keptUser) {
    try {
      const turns = await session.getConversationTurns();
      turn = turns[turns.length - 1]?.turn ?? null;
    } catch {
      turn = null;
    }
  }

  const persistence = persistenceView({
    reporter,
    storeProblems: prepared.storeProblems,
    settled,
    produced,
    turn,
    usageStored,
    completed,
    usage,
    spent,
    writeFailed: recording.failedWrites.length > 0,
    forkDeleted,
  });
  if (completed && result) {
    const outcome: RunOutcome = {
      kind: 'run/completed',
      runId: reporter.runId,
      finalOutput: runValueText(result.finalOutput),
      usage: usage ?? usageView(undefined),
      written: persistence,
    };
    reporter.emit(outcome);
    return outcome;
  }
  const c =
    error !== undefined
      ? classify(error, { endpoint: prepared.endpoint, cancelled })
      : interruptions.length > 0
        ? {
            failure: 'tool' as const,
            message: `The tool ${interruptions.map((i) => `'${toolName(i.rawItem)}'`).join(', ')} asks for approval before it runs, and approving tool calls is not supported here yet, so the run stopped before calling it.`,
          }
        : { failure: 'cancelled' as const, message: 'The run was cancelled.' };
  const outcome: RunOutcome = {
    kind: 'run/failed',
    runId: reporter.runId,
    failure: c.failure,
    message: reporter.redact(c.message),
    ...(c.status !== undefined ? { status: c.status } : {}),
    usage: spent ? usage : null,
    written: persistence,
  };
  reporter.emit(outcome);
  return outcome;
}

function persistenceView(args: {
  reporter: RunReporter;
  storeProblems: readonly string[];
  settled: SettleResult;
  produced: Produced;
  turn: number | null;
  usageStored: boolean;
  completed: boolean;
  usage: RunUsageView | null;
  spent: boolean;
  writeFailed: boolean;
  forkDeleted: boolean;
}): RunPersistenceView {
  const { reporter, storeProblems, settled, produced, turn, usageStored, completed, usage, spent, writeFailed, forkDeleted } = args;
  const keptKeys = new Set(settled.kept.map(itemKey));
  const notSaved = produced.items.filter((i) => !keptKeys.has(itemKey(i))).map(itemLabel);
  if (produced.pendingText !== '')
    notSaved.push(`${Array.from(produced.pendingText).length} characters of streamed text (the answer was cut off)`);
  const kept = settled.kept.map(itemLabel);
  const removed = settled.removed.map(itemLabel);
  const branch = `branch '${reporter.branchId}'`;
  const parts: string[] = [];
  if (completed) {
    parts.push(`Saved turn ${turn ?? '?'} on ${branch}: ${kept.length} item(s)${usageStored ? ' and its usage' : ''}.`);
    if (removed.length > 0) parts.push(`Removed ${removed.length} item(s) left without an output: ${removed.join('; ')}.`);
  } else if (settled.kept.length > 0) {
    const tokens = usage ? `${usage.totalTokens} tokens in ${usage.requests} request(s)` : 'its usage';
    parts.push(
      `Kept your message as turn ${turn ?? '?'} on ${branch}${usageStored ? `, with the usage spent (${tokens})` : ''}${kept.length > 1 ? ` and ${kept.length - 1} more item(s)` : ''}.`,
    );
    if (removed.length > 0) parts.push(`Removed ${removed.length} item(s) that would leave the turn half-written: ${removed.join('; ')}.`);
  } else if (removed.length > 0) {
    parts.push(
      `Nothing is stored: the SDK had saved your message before calling the model, and it was removed${forkDeleted ? '' : `, so ${branch} is as it was`}.`,
    );
  } else if (writeFailed) {
    parts.push(
      `Nothing was stored: saving the turn failed, so ${branch} is as it was${spent ? ` (the ${usage?.totalTokens ?? 0} tokens spent are not recorded)` : ''}.`,
    );
  } else {
    parts.push(`Nothing was written; ${branch} is as it was.`);
  }
  if (forkDeleted) {
    parts.push(`The new ${branch} made for this run was deleted again.`);
    removed.push(`branch '${reporter.branchId}' (made for this run)`);
  }
  if (notSaved.length > 0 && !completed) parts.push(`Not saved: ${notSaved.join('; ')}.`);
  if (settled.problem) parts.push(`Could not finish cleaning up: ${settled.problem}.`);
  if (!usageStored && settled.kept.some((i) => 'role' in i && i.role === 'user') && storeProblems.length > 0)
    parts.push('The usage could not be stored.');
  return {
    summary: reporter.redact(parts.join(' ')),
    kept: kept.map((l) => reporter.redact(l)),
    removed: removed.map((l) => reporter.redact(l)),
    notSaved: notSaved.map((l) => reporter.redact(l)),
    turn,
    usageStored,
  };
}

/** Sums a run's usage into the view (details are one record per request, with the API's snake_case keys). */
export function usageView(
  usage:
    | {
        requests?: number;
        inputTokens?: number;
        outputTokens?: number;
        totalTokens?: number;
        inputTokensDetails?: unknown;
        outputTokensDetails?: unknown;
      }
    | undefined,
): RunUsageView {
  const sum = (details: unknown, key: string): number =>
    (Array.isArray(details) ? details : details ? [details] : []).reduce((n: number, d: unknown) => {
      const v = typeof d === 'object' && d !== null ? (d as Record<string, unknown>)[key] : undefined;
      return n + (typeof v === 'number' ? v : 0);
    }, 0);
  return {
    requests: usage?.requests ?? 0,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    totalTokens: usage?.totalTokens ?? 0,
    cachedTokens: sum(usage?.inputTokensDetails, 'cached_tokens'),
    reasoningTokens: sum(usage?.outputTokensDetails, 'reasoning_tokens'),
  };
}
