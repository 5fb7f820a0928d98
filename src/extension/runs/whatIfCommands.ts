/**
 * The what-if commands on a user turn (tree context menu, palette): Retry from Here, Edit and Resend, Retry with
 * Several Models. They pick the turn (from the tree node, or quick picks), the model(s) and the text, open the
 * session's conversation view and start the runs through it (whatIf.ts), so the retries stream into the view; they
 * resolve with the result once every run has ended (tests and other callers read it).
 *
 * Arguments after the turn, for tests and keybindings: Retry from Here `(turn, model?, agent?, tools?)`, Edit and
 * Resend `(turn, text?, model?, agent?, tools?)`, Retry with Several Models `(turn, models?: string[], agent?, tools?)`.
 * `tools` is `replay`, `strict` or `live` (docs/replay.md); without it the runs use `agentSessions.replay.mode`: the
 * palette asks no extra question on every retry, and the view's what-if form chooses per run.
 */
import * as vscode from 'vscode';
import { MAX_WHAT_IF_MODELS, whatIfSelectionProblem } from '../../shared/whatIfModels';
import { TOOLS_MODES, type ToolsMode } from '../../shared/protocol/replay';
import { userMessageText } from '../../agents/whatIfInput';
import { readWhatIfModels } from './agentRunner';
import { arg, badArgument } from '../core/commandArgs';
import type { Services } from '../services';
import { compareBranches } from '../compare/compareCommands';
import { pickSession } from '../databases/pickers';
import { turnItem } from '../databases/pickItems';
import { plainIconText } from '../core/iconText';
import { pickAgent } from './agentChoices';
import { command, type CommandsOf } from '../core/commandTable';
import { setting } from '../core/settings';
import { Setting } from '../core/contributions';
import { UserFacingError } from '../core/userError';
import { readUserMessage, type WhatIfRequest, type WhatIfResult, type WhatIfTurn } from './whatIf';
import { showWarningNotice } from '../core/notices';

/** Picks the turn of a palette invocation: a session, then a user turn of its current branch (newest first). */
async function pickTurn(deps: Services): Promise<WhatIfTurn | undefined> {
  const ref = await pickSession(deps.registry);
  if (!ref) return undefined;
  const db = deps.registry.require(ref.dbPath).db;
  if (!db) throw new UserFacingError(vscode.l10n.t('The database cannot be read.'));
  const branchId = deps.registry.currentBranch(ref.dbPath, ref.sessionId);
  const page = await db.getTurnsPageBefore(ref.sessionId, branchId, { beforeTurn: null, limit: 200 });
  const turns = page.turns.filter((t) => t.branchTurnNumber !== null && t.error === null).reverse();
  if (turns.length === 0)
    throw new UserFacingError(vscode.l10n.t("Branch '{0}' of {1} has no user turn to retry.", branchId, ref.sessionId));
  const pick = await vscode.window.showQuickPick(
    turns.map((t) => ({ ...turnItem(t), turn: t })),
    { title: vscode.l10n.t('Turn of {0} · {1} to retry', ref.sessionId, branchId), matchOnDescription: true },
  );
  return pick && { ...ref, branchId, turn: pick.turn.turn, branchTurnNumber: pick.turn.branchTurnNumber };
}

/**
 * One model to run on: the argument, else the only choice, else a quick pick with the configured model first (the
 * current settings); undefined when cancelled.
 */
async function pickModel(arg: unknown, title: string): Promise<string | undefined> {
  if (typeof arg === 'string' && arg.trim() !== '') return arg.trim();
  const choices = readWhatIfModels();
  if (choices.length <= 1) return choices[0] ?? setting(Setting.agentModel);
  const pick = await vscode.window.showQuickPick(
    choices.map((m, i) => ({ label: plainIconText(m), description: i === 0 ? vscode.l10n.t('current settings') : '', model: m })),
    { title, placeHolder: vscode.l10n.t('Model for the new branch (agentSessions.agent.models lists more)') },
  );
  return pick?.model;
}

/** Up to MAX_WHAT_IF_MODELS models, picked together; asks again while the selection is not acceptable. */
async function pickModels(arg: unknown): Promise<string[] | undefined> {
  if (Array.isArray(arg)) return arg.filter((m): m is string => typeof m === 'string');
  if (arg !== undefined) badArgument(vscode.l10n.t('Retry with Several Models'), vscode.l10n.t('a list of model names'));
  const choices = readWhatIfModels();
  if (choices.length < 2)
    throw new UserFacingError(
      vscode.l10n.t('Retry with Several Models needs more than one model: list them in the setting agentSessions.agent.models.'),
    );
  let picked = new Set(choices.slice(0, MAX_WHAT_IF_MODELS));
  for (;;) {
    const items = choices.map((m, i) => ({
      label: plainIconText(m),
      description: i === 0 ? vscode.l10n.t('current settings') : '',
      picked: picked.has(m),
      model: m,
    }));
    const chosen = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Retry with Several Models (up to {0}, one new branch each)', MAX_WHAT_IF_MODELS),
      canPickMany: true,
    });
    if (!chosen) return undefined;
    const models = chosen.map((c) => c.model);
    const problem = whatIfSelectionProblem(models);
    if (!problem) return models;
    void showWarningNotice(problem);
    picked = new Set(models);
  }
}

/** The tools mode a command was given for its runs (undefined: the setting's), or a refusal naming the command. */
function toolsArgument(value: unknown, title: string): ToolsMode | undefined {
  if (value === undefined) return undefined;
  if (TOOLS_MODES.includes(value as ToolsMode)) return value as ToolsMode;
  return badArgument(title, TOOLS_MODES.join(', '));
}

export function whatIfCommands(s: Services): CommandsOf<'retryFromHere' | 'editAndResend' | 'retryWithModels'> {
  const { registry, panels } = s;

  /** The turn of the command: its tree node, or one the user picks. */
  const aTurn = arg.optionalNode(() => vscode.l10n.t('a user turn'), 'turn');
  const turnOf = async (node: WhatIfTurn | undefined): Promise<WhatIfTurn | undefined> => node ?? pickTurn(s);

  /** Opens the view on the original branch and runs the what-if through it; resolves when every run ended. */
  const run = async (turn: WhatIfTurn, request: WhatIfRequest): Promise<WhatIfResult> => {
    // Before the view opens or moves: a run that cannot start (no key, read-only) changes nothing it shows.
    await s.runner.checkCanStart(turn.dbPath, request.agent);
    const panel = panels.open({ dbPath: turn.dbPath, sessionId: turn.sessionId, branchId: turn.branchId, turn: turn.turn });
    await panels.whenReady(panel);
    const started = await panel.startWhatIf(turn, request, (targets) => void compareBranches(s, targets));
    return started.done;
  };

  return {
    retryFromHere: command(
      vscode.l10n.t('Retry from Here'),
      [aTurn, arg.any, arg.text, arg.any],
      async (node, modelArg, agentArg, toolsArg) => {
        const tools = toolsArgument(toolsArg, vscode.l10n.t('Retry from Here'));
        const turn = await turnOf(node);
        if (!turn) return undefined;
        const title = vscode.l10n.t('Retry turn {0} of {1}', turn.turn, turn.branchId);
        const agent = await pickAgent(s.runner.choices, agentArg, title);
        if (agent === undefined) return undefined;
        const model = await pickModel(modelArg, title);
        if (model === undefined) return undefined;
        return run(turn, { kind: 'retry', models: [model], agent, ...(tools ? { tools } : {}) });
      },
    ),

    editAndResend: command(
      vscode.l10n.t('Edit and Resend'),
      [aTurn, arg.text, arg.any, arg.text, arg.any],
      async (node, textArg, modelArg, agentArg, toolsArg) => {
        const tools = toolsArgument(toolsArg, vscode.l10n.t('Edit and Resend'));
        const turn = await turnOf(node);
        if (!turn) return undefined;
        let text = textArg;
        if (text === undefined) {
          const stored = await readUserMessage(registry, turn);
          text = await vscode.window.showInputBox({
            title: vscode.l10n.t('Edit and Resend turn {0} of {1}', turn.turn, turn.branchId),
            prompt: vscode.l10n.t('The edited message goes to a new branch that shares the turns before this one.'),
            value: userMessageText(stored),
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('The message is empty.') : undefined),
          });
          if (text === undefined) return undefined;
        }
        const title = vscode.l10n.t('Resend turn {0} of {1}', turn.turn, turn.branchId);
        const agent = await pickAgent(s.runner.choices, agentArg, title);
        if (agent === undefined) return undefined;
        const model = await pickModel(modelArg, title);
        if (model === undefined) return undefined;
        return run(turn, { kind: 'edit', editedText: text, models: [model], agent, ...(tools ? { tools } : {}) });
      },
    ),

    retryWithModels: command(
      vscode.l10n.t('Retry with Several Models'),
      [aTurn, arg.any, arg.text, arg.any],
      async (node, modelsArg, agentArg, toolsArg) => {
        const tools = toolsArgument(toolsArg, vscode.l10n.t('Retry with Several Models'));
        const turn = await turnOf(node);
        if (!turn) return undefined;
        const agent = await pickAgent(s.runner.choices, agentArg, vscode.l10n.t('Retry with Several Models'));
        if (agent === undefined) return undefined;
        const models = await pickModels(modelsArg);
        if (models === undefined) return undefined;
        return run(turn, { kind: 'retry', models, agent, ...(tools ? { tools } : {}) });
      },
    ),
  };
}
