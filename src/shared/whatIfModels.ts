import * as l10n from '@vscode/l10n';

/**
 * The models a what-if run can pick from: the configured agent model first, then `agentSessions.agent.models`.
 * Shared by the host's quick picks and the conversation view's model checkboxes, so both offer the same list and
 * enforce the same limit.
 */

/** At most this many models run in parallel for one "Retry with Several Models" (one new branch each). */
export const MAX_WHAT_IF_MODELS = 4;

/** The configured model, then the listed ones, trimmed, without empty names or repeats (the first spelling wins). */
export function whatIfModelChoices(configured: string, listed: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const m of [configured, ...listed]) {
    if (typeof m !== 'string') continue; // a hand-edited settings.json can hold anything
    const name = m.trim();
    if (name !== '' && !out.includes(name)) out.push(name);
  }
  return out;
}

/** Why a selection of models cannot run, or undefined: at least one, at most `MAX_WHAT_IF_MODELS`, no repeats. */
export function whatIfSelectionProblem(models: readonly string[]): string | undefined {
  if (models.length === 0) return l10n.t('Pick at least one model.');
  if (models.length > MAX_WHAT_IF_MODELS)
    return l10n.t(
      'Pick at most {0} models ({1} are selected): each runs in parallel on a branch of its own.',
      MAX_WHAT_IF_MODELS,
      models.length,
    );
  if (new Set(models).size !== models.length) return l10n.t('A model is picked twice.');
  if (models.some((m) => m.trim() === '')) return l10n.t('A model name is empty.');
  return undefined;
}

/** What the conversation view offers in its what-if editor (`whatIf/models`). */
export interface WhatIfModelsView {
  /** `agentSessions.agent.model`: what "Retry from here" runs on. */
  configured: string;
  /** The configured model first, then the listed ones (`whatIfModelChoices`). */
  choices: string[];
}

/** The runs a what-if started (`whatIf/start`), one new branch each; their events arrive as `run/didEvent`. */
export interface WhatIfStartedView {
  runs: { runId: string; branchId: string; model: string }[];
}

/**
 * The model an agent command is asked to use (`RunAgentInput.forwardedProps.model`): the configured default means
 * "whatever the agent uses" (null), since the command brings its own model; only a model picked beside it is passed.
 */
export function commandModel(picked: string | undefined, configured: string): string | null {
  return picked && picked !== configured ? picked : null;
}

/** How a run's model is shown, and whether it is known (only a known model is priced). */
export interface RunModelLabel {
  /** The compare column's label and what the view says the run is on. */
  label: string;
  /** What goes into the new branch's name (`retry-<part>-<n>`). */
  namePart: string;
  /** The model that ran, when we know it; null when the agent chose (then no cost is shown). */
  model: string | null;
}

/**
 * The label of a run on `picked`: the model itself for our agent and for a model passed to a command; "agent's own
 * model" for a command left on its own model (`commandModel` null), which may be any model: naming the configured
 * one would label, and price, the run with a model it did not use.
 */
export function runModelLabel(picked: string, configured: string, external: boolean): RunModelLabel {
  if (external && commandModel(picked, configured) === null)
    return { label: l10n.t("agent's own model"), namePart: 'own-model', model: null };
  return { label: picked, namePart: picked, model: picked };
}
