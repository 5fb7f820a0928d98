/**
 * Agent runs started from a conversation view (its composer, a what-if, *Send Message*): every event streams into
 * that view, and a run that cannot start still ends there, as a `run/failed` outcome.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { RunInput } from '../../agents/runOptions';
import { failedBeforeWriting, type RunOutcome } from '../../shared/protocol/runEvents';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import { describeError } from '../core/userError';
import type { ShownSession } from '../core/viewRequests';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { AgentRunner, RunTarget } from './agentRunner';
import { startWhatIf, type StartedWhatIf, type WhatIfRequest, type WhatIfTurn } from './whatIf';

/** The view a run streams into. */
export type RunView = Pick<ShownSession, 'target' | 'post'>;

/** What a run may choose besides its branch: a fork, a model, an agent, what it does with recorded tool calls. */
export type RunChoices = Pick<RunTarget, 'fork' | 'model' | 'agent' | 'tools'>;

/**
 * Runs the agent on `branchId` of the view's session with `input`, streaming every event into the view. The outcome
 * resolves with how the run ended (a failure is an outcome, not an exception).
 */
export function startViewRun(
  runner: AgentRunner,
  view: RunView,
  branchId: string,
  input: RunInput,
  runId: string = randomUUID(),
  options: RunChoices = {},
): { runId: string; outcome: Promise<RunOutcome> } {
  const outcome = runner.run(
    { dbPath: view.target.dbPath, sessionId: view.target.sessionId, branchId, ...options },
    input,
    (event) => view.post({ kind: 'run/didEvent', event }),
    runId,
  );
  return { runId, outcome };
}

/**
 * `startViewRun`, with a run that cannot start (a read-only database, …) ending as a `run/failed` outcome, also posted
 * to the view, instead of a rejection: the view always sees the run end.
 */
export function startReportedViewRun(
  runner: AgentRunner,
  view: RunView,
  branchId: string,
  input: RunInput,
  runId: string,
  options: RunChoices = {},
): Promise<RunOutcome> {
  return startViewRun(runner, view, branchId, input, runId, options).outcome.catch((err: unknown) => {
    const event = failedBeforeWriting(runId, 'other', describeError(err), vscode.l10n.t('Nothing was written.'));
    view.post({ kind: 'run/didEvent', event });
    return event;
  });
}

/** Starts a what-if from a turn of the view's session; its runs stream into the view, `compare` opens the comparison. */
export function startViewWhatIf(
  registry: DatabaseRegistry,
  runner: AgentRunner,
  view: RunView,
  source: WhatIfTurn,
  request: WhatIfRequest,
  compare: (targets: CompareTarget[]) => void,
): Promise<StartedWhatIf> {
  return startWhatIf(
    registry,
    runner,
    source,
    request,
    (input, o) =>
      startReportedViewRun(runner, view, source.branchId, input, o.runId, {
        fork: o.fork,
        model: o.model,
        agent: o.agent,
        tools: o.tools,
      }),
    compare,
  );
}
