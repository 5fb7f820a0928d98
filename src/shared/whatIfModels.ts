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
