/**
 * What-if runs from a user turn: Retry from Here, Edit and Resend, Retry with Several Models. Each run forks a new
 * branch before the turn and sends its user message again (edited, or on another model) through the conversation
 * view's run path, so it streams into the view and stores its usage like any run; when every run has ended, the
 * original branch and each retry that finished open in the compare view. The commands (whatIfCommands.ts) and the
 * view's `whatIf/start` request both go through `startWhatIf`.
 */
import * as vscode from 'vscode';
import { randomUUID } from 'node:crypto';
import { userMessageOf, whatIfInput } from '../../agents/whatIfInput';
import type { RunInput } from '../../agents/runOptions';
import { branchNameProblem, whatIfBranchNames } from '../../shared/branchNames';
import type { ToolsMode } from '../../shared/protocol/replay';
import type { RunOutcome } from '../../shared/protocol/runEvents';
import { whatIfSelectionProblem, type RunModelLabel } from '../../shared/whatIfModels';
import { usedBranchIds } from '../branches/branchActions';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { AgentRunner } from './agentRunner';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import { describeError, UserFacingError } from '../core/userError';
import { whatIfReport } from './whatIfReport';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import { showErrorNotice, showInformationNotice, showWarningNotice } from '../core/notices';

/** The command of the compare view (the lead's panel): `targets`, 2 to 5, the first the baseline. */

/** The user turn a what-if starts from. */
export interface WhatIfTurn extends SessionRef {
  branchId: string;
  /** `user_turn_number`: where the stored user message is read. */
  turn: number;
  /** `branch_turn_number`: where the new branches fork (they share every turn before it). */
  branchTurnNumber: number | null;
}

export interface WhatIfRequest {
  /** `retry` sends the message as stored; `edit` sends `editedText` instead. Also the prefix of the branch names. */
  kind: 'retry' | 'edit';
  editedText?: string;
  /** One model per new branch, run in parallel (1 to MAX_WHAT_IF_MODELS). */
  models: string[];
  /** The agent (agentChoices.ts ids); default: the one chosen last. */
  agent?: string;
  /** What the runs do with the recorded turn's tool calls (docs/replay.md); default: `agentSessions.replay.mode`. */
  tools?: ToolsMode;
}

/** One retry: its model, branch, run and how it ended. */
export interface WhatIfRun {
  /** The model picked for it (what the run was asked for). */
  model: string;
  /** How it is shown and priced: an agent command on its own model is "agent's own model", unpriced. */
  label: RunModelLabel;
  branchId: string;
  runId: string;
  outcome: RunOutcome;
  /** Wall time of the run, from its start to its outcome. */
  runMs: number;
}

export interface WhatIfResult {
  source: WhatIfTurn;
  runs: WhatIfRun[];
  /** The original branch and every retry that completed (null when none did: nothing to compare). */
  compareTargets: CompareTarget[] | null;
  /** True when the compare view was asked to open. */
  compared: boolean;
  /**
   * The notification about failed runs (which branch, which model, why) and paused ones (what each waits for), when
   * any failed or paused.
   */
  report?: string;
}

/** What a started what-if returns at once; `done` resolves when every run has ended (never rejects). */
export interface StartedWhatIf {
  runs: { runId: string; branchId: string; model: string }[];
  done: Promise<WhatIfResult>;
}

/** Starts one run of the what-if (viewRuns.ts `startReportedViewRun`: events stream into that view; failures are outcomes). */
export type StartRun = (
  input: RunInput,
  options: { fork: { fromTurn: number; name: string }; model: string; runId: string; agent?: string; tools?: { mode: ToolsMode } },
) => Promise<RunOutcome>;

/** The stored user message of the turn, or a UserFacingError saying why there is none to send again. */
export async function readUserMessage(registry: DatabaseRegistry, turn: WhatIfTurn): Promise<Record<string, unknown>> {
  const db = registry.require(turn.dbPath).db;
  if (!db) throw new UserFacingError(registry.get(turn.dbPath)?.problem ?? vscode.l10n.t('The database cannot be read.'));
  const items = await db.getTurnItems(turn.sessionId, turn.branchId, turn.turn);
  const user = userMessageOf(items.flatMap((i) => (i.corrupt ? [] : [i.item])));
  if (!user)
    throw new UserFacingError(vscode.l10n.t("Turn {0} of '{1}' has no readable user message to send again.", turn.turn, turn.branchId));
  return user;
}

/**
 * Checks the request, names the branches and starts every run; resolves once they have started. Every branch name is
 * new in the session (`retry-<model>-<n>`); a run that fails does not stop the others. When all have ended, `done`
 * reports failures in one notification and opens the comparison of the original with each completed retry.
 */
export async function startWhatIf(
  registry: DatabaseRegistry,
  runner: AgentRunner,
  source: WhatIfTurn,
  request: WhatIfRequest,
  startRun: StartRun,
  compare: (targets: CompareTarget[]) => void,
): Promise<StartedWhatIf> {
  await runner.checkCanStart(source.dbPath, request.agent);
  if (source.branchTurnNumber === null)
    throw new UserFacingError(vscode.l10n.t('Turn {0} has no branch turn number, so no branch can start before it.', source.turn));
  const problem = whatIfSelectionProblem(request.models);
  if (problem) throw new UserFacingError(problem);
  if (request.kind === 'edit' && (request.editedText ?? '').trim() === '')
    throw new UserFacingError(vscode.l10n.t('The message is empty.'));
  const stored = await readUserMessage(registry, source);
  const input = whatIfInput(stored, request.kind === 'edit' ? request.editedText : undefined);
  const used = await usedBranchIds(registry, source);
  const labels = request.models.map((m) => runner.modelLabel(m, request.agent));
  const names = whatIfBranchNames(
    request.kind,
    labels.map((l) => l.namePart),
    used,
  );
  for (const name of names) {
    const why = branchNameProblem(name, used);
    if (why) throw new UserFacingError(why);
  }
  const fromTurn = source.branchTurnNumber;
  const runs = request.models.map((model, i) => {
    const branchId = names[i] as string;
    const label = labels[i] as RunModelLabel;
    const runId = randomUUID();
    const started = Date.now();
    const outcome = startRun(input, {
      fork: { fromTurn, name: branchId },
      model,
      runId,
      ...(request.agent !== undefined ? { agent: request.agent } : {}),
      ...(request.tools !== undefined ? { tools: { mode: request.tools } } : {}),
    }).then((o): WhatIfRun => ({
      model,
      label,
      branchId,
      runId,
      outcome: o,
      runMs: Date.now() - started,
    }));
    return { runId, branchId, model: label.label, outcome };
  });
  const done = Promise.all(runs.map((r) => r.outcome)).then((settled) => finish(source, request, settled, compare));
  return { runs: runs.map(({ runId, branchId, model }) => ({ runId, branchId, model })), done };
}

/** The comparison of the original with every completed retry, or null when none completed. */
export function compareTargetsOf(source: WhatIfTurn, runs: readonly WhatIfRun[]): CompareTarget[] | null {
  const done = runs.filter((r) => r.outcome.kind === 'run/completed');
  if (done.length === 0) return null;
  return [
    { dbPath: source.dbPath, sessionId: source.sessionId, branchId: source.branchId },
    ...done.map((r) => ({
      dbPath: source.dbPath,
      sessionId: source.sessionId,
      branchId: r.branchId,
      label: r.label.label,
      // Priced at the model that ran, and not at all when the agent chose it (no price for an unknown model).
      ...(r.label.model !== null ? { model: r.label.model } : { unpriced: true as const }),
      runMs: r.runMs,
    })),
  ];
}

const TITLES = { retry: () => vscode.l10n.t('Retry from Here'), edit: () => vscode.l10n.t('Edit and Resend') } as const;

/**
 * Reports the runs that failed and those the agent paused, waiting for input (one notification for all: a pause alone
 * is no error, so it is information), and opens the comparison.
 */
async function finish(
  source: WhatIfTurn,
  request: WhatIfRequest,
  runs: WhatIfRun[],
  compare: (targets: CompareTarget[]) => void,
): Promise<WhatIfResult> {
  const compareTargets = compareTargetsOf(source, runs);
  const title = request.models.length > 1 && request.kind === 'retry' ? vscode.l10n.t('Retry with Several Models') : TITLES[request.kind]();
  const shown = whatIfReport(
    title,
    runs.map((r) => ({ branchId: r.branchId, label: r.label.label, outcome: r.outcome })),
    compareTargets !== null,
  );
  const report = shown?.text;
  if (shown) {
    const show = {
      error: showErrorNotice,
      warning: showWarningNotice,
      information: showInformationNotice,
    }[shown.severity];
    void show(shown.text);
  }
  let compared = false;
  if (compareTargets) {
    try {
      compare(compareTargets);
      compared = true;
    } catch (err) {
      void showErrorNotice(vscode.l10n.t('The comparison did not open: {0}', describeError(err)));
    }
  }
  return { source, runs, compareTargets, compared, ...(report !== undefined ? { report } : {}) };
}
