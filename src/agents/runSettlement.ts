/**
 * Settling an SDK run once the runner is done: the branch put right as for every kind of run (branchSettlement.ts,
 * from what the recording session saw written), the usage stored on this run's turn (found by its items, not the
 * branch's newest: runPersistence.ts findOwnTurn), and the outcome that says what was written, with the failure
 * sorted by the SDK's and the client's errors (runFailures.ts).
 */
import type { Agent, AgentOutputType, StreamedRunResult } from '@openai/agents';
import { runUsageSource } from './runSession';
import type { RunOutcome } from '../shared/protocol/runEvents';
import { runValueText, toolName } from '../shared/itemText';
import type { RunOnBranchOptions } from './runOptions';
import { classify } from './runFailures';
import { findOwnTurn, isUserMessage, type RecordingSession } from './runPersistence';
import { settleAndDescribe } from './branchSettlement';
import { Produced, usageView } from './runSummary';

export { Produced, usageView } from './runSummary';
import type { PreparedRun } from './runPreparation';
import type { RunReporter } from './runReporter';
import type { RunReplay } from './replay/runReplay';
import { redactDeep } from './apiKey';
import { errorMessage } from '../shared/errorMessage';

export type StreamResult = StreamedRunResult<unknown, Agent<unknown, AgentOutputType>>;

/** The runner's part of a run: its result (when it started), the error it ended with, and what it wrote. */
export interface StreamedRun {
  result: StreamResult | undefined;
  error: unknown;
  produced: Produced;
  recording: RecordingSession;
  /** The branch's newest turn before the run (0 when none), or undefined when it could not be read. */
  turnBefore: number | undefined;
}

/** Puts the branch right, stores the usage, and reports the outcome (also returned). */
export async function settleAndReport(
  options: RunOnBranchOptions,
  reporter: RunReporter,
  prepared: PreparedRun,
  streamed: StreamedRun,
  replay: RunReplay,
): Promise<RunOutcome> {
  const { session } = prepared;
  const { result, error, produced, recording, turnBefore } = streamed;
  // A strict replay refused a call before its tool ran: the run is rolled back whole (docs/replay.md), spent or not.
  const strict = replay.strictFailure(error);
  const cancelled = (options.signal?.aborted ?? false) || (result?.cancelled ?? false);
  const interruptions = result && error === undefined ? result.interruptions : [];
  const completed = error === undefined && !!result && interruptions.length === 0 && (!cancelled || result.finalOutput !== undefined);
  const usage = result ? usageView(result.state.usage) : null;
  const spent = usage !== null && (usage.requests > 0 || usage.totalTokens > 0);

  // Why the run's usage was not stored when its turn could not be told (said in the outcome's summary).
  let usageNote: string | undefined;
  const { persistence } = await settleAndDescribe(
    session,
    reporter,
    {
      completed,
      spent: spent && !strict,
      written: recording.writtenItems(),
      fork: options.fork ? { branchId: reporter.branchId, exists: true } : undefined,
      produced,
      storeProblems: prepared.storeProblems,
      writeFailed: recording.failedWrites.length > 0,
    },
    async (keptUser, kept) => {
      // The run's turn is the one holding its items, not the branch's newest: another writer of the file (a Python
      // agent, docs/session-format.md §1) may have added a turn after it, whose usage the latest-turn form of
      // storeRunUsage would replace. Its usage goes on that turn only, checked in the write's transaction (§9).
      let usageStored = false;
      let turn: number | null = null;
      if (keptUser) {
        let own: { turn: number } | { problem: string };
        try {
          own =
            turnBefore === undefined
              ? { problem: "the branch's turns could not be read before the run" }
              : await findOwnTurn(session, kept, turnBefore);
        } catch (err) {
          own = { problem: `reading the branch's turns failed (${errorMessage(err)})` };
        }
        if ('turn' in own) turn = own.turn;
        if (result && 'turn' in own) {
          const before = prepared.storeProblems.length;
          const userItem = kept.filter(isUserMessage).pop();
          await session.storeRunUsage(runUsageSource(result), { turn: own.turn, ...(userItem ? { expected: userItem } : {}) });
          usageStored = prepared.storeProblems.length === before;
        } else if (result && 'problem' in own) {
          usageNote = `The usage was not stored: ${own.problem}.`;
          reporter.log(usageNote);
        }
      }
      return { turn, usageStored, usage };
    },
  );
  if (usageNote !== undefined) persistence.summary = reporter.redact(`${persistence.summary} ${usageNote}`);
  if (completed && result)
    return reporter.finish({
      kind: 'run/completed',
      runId: reporter.runId,
      // Read back from the run's result, not the redacted stream: a key the model wrote is redacted here too.
      finalOutput: reporter.redact(runValueText(result.finalOutput)),
      usage: usage ?? usageView(undefined),
      written: persistence,
      replay: redactDeep(replay.summary(), reporter.secrets),
    });
  const c = strict
    ? { failure: 'tool' as const, message: strict.message, status: undefined }
    : error !== undefined
      ? classify(error, { endpoint: prepared.endpoint, cancelled })
      : interruptions.length > 0
        ? {
            failure: 'tool' as const,
            message: `The tool ${interruptions.map((i) => `'${toolName(i.rawItem)}'`).join(', ')} asks for approval before it runs, and approving tool calls is not supported here yet, so the run stopped before calling it.`,
          }
        : { failure: 'cancelled' as const, message: 'The run was cancelled.' };
  return reporter.finish({
    kind: 'run/failed',
    runId: reporter.runId,
    failure: c.failure,
    message: reporter.redact(c.message),
    ...(c.status !== undefined ? { status: c.status } : {}),
    usage: spent ? usage : null,
    written: persistence,
    replay: redactDeep(replay.summary(), reporter.secrets),
  });
}
