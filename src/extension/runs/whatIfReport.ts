/**
 * The one notification a what-if shows when its runs have ended (whatIf.ts): the runs that failed (which branch, which
 * model, why) and the runs the agent paused, waiting for input (what each waits for). A pause is no error: alone, it
 * is information. Without VS Code, so it is unit-tested; localized with @vscode/l10n (the host loads its bundle).
 */
import * as l10n from '@vscode/l10n';
import type { RunOutcome } from '../../shared/protocol/runEvents';
import { isPausedRun, pausedRunText } from '../../shared/pausedRun';

/** What the report reads of one run. */
export interface WhatIfReportRun {
  branchId: string;
  /** How the run's model is shown ("gpt-4.1", "agent's own model"). */
  label: string;
  outcome: RunOutcome;
}

export interface WhatIfReport {
  text: string;
  /** `error` when runs failed and nothing is compared, `warning` when the others are, `information` for pauses alone. */
  severity: 'error' | 'warning' | 'information';
}

/** The report of the what-if titled `title`, or undefined when every run completed; `comparing`: others completed. */
export function whatIfReport(title: string, runs: readonly WhatIfReportRun[], comparing: boolean): WhatIfReport | undefined {
  const failed = runs.filter((r) => r.outcome.kind === 'run/failed' && !isPausedRun(r.outcome));
  const paused = runs.filter((r) => isPausedRun(r.outcome));
  const parts: string[] = [];
  if (failed.length > 0) {
    const lines = failed.map(
      (r) => `${r.branchId} (${r.label}): ${r.outcome.kind === 'run/failed' ? r.outcome.message : ''} ${r.outcome.written.summary}`,
    );
    const head =
      runs.length === 1
        ? l10n.t('{0} failed.', title)
        : comparing
          ? l10n.t('{0}: {1} of {2} runs failed; comparing the others.', title, failed.length, runs.length)
          : l10n.t('{0}: {1} of {2} runs failed.', title, failed.length, runs.length);
    parts.push(`${head} ${lines.join(' · ')}`);
  }
  if (paused.length > 0) {
    const lines = paused.map(
      (r) =>
        `${r.branchId} (${r.label}): ${r.outcome.kind === 'run/failed' ? pausedRunText(r.outcome.interrupts) : ''} ${r.outcome.written.summary}`,
    );
    const head =
      runs.length === 1
        ? l10n.t('{0}: the agent paused the run, waiting for input.', title)
        : l10n.t('{0}: the agent paused {1} of {2} runs, waiting for input.', title, paused.length, runs.length);
    parts.push(`${head} ${lines.join(' · ')}`);
  }
  if (parts.length === 0) return undefined;
  return { text: parts.join(' '), severity: failed.length === 0 ? 'information' : comparing ? 'warning' : 'error' };
}
