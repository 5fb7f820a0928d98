/**
 * `check --save NAME` and `check --baseline NAME` (docs/check.md, "Experiments"): the check's report kept in the
 * experiment store (src/store/experiments/, a file of our own beside the review store unless `--experiments` names
 * one; never the session file), and the flips from a saved experiment. Both names are checked before any case runs —
 * a baseline that does not exist, or a name saved already without --force, would otherwise cost the whole check.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CheckReport } from '../agents/check/checkTypes';
import { ExperimentStoreError } from '../store/experiments/experimentErrors';
import { OutputFileError } from '../store/files/outputFileError';
import { refuseSymlinks } from '../store/files/outputGuard';
import { ExperimentStore, checkExperimentName, defaultExperimentsPath } from '../store/experiments/experimentStore';
import type { BaselineComparison, ExperimentSummary } from '../store/experiments/experimentTypes';
import { NotFoundError, UsageError } from './exitCodes';
import { paint } from './terminal';

export interface ExperimentArgs {
  save?: string;
  baseline?: string;
  /** The store (`--experiments`); default beside the review store. */
  experiments?: string;
  reviews: string;
  force: boolean;
}

export interface ExperimentPlan {
  path: string;
  save: string | undefined;
  baseline: string | undefined;
}

/** Checks the names and the store before the check runs; undefined when neither --save nor --baseline is given. */
export function planExperiments(args: ExperimentArgs): ExperimentPlan | undefined {
  if (args.save === undefined && args.baseline === undefined) {
    if (args.experiments !== undefined) throw new UsageError('--experiments names the store of --save and --baseline: give one of them');
    return undefined;
  }
  const path = args.experiments ?? defaultExperimentsPath(args.reviews);
  const name = (flag: string, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    try {
      return checkExperimentName(value);
    } catch (err) {
      if (err instanceof ExperimentStoreError) throw new UsageError(`--${flag}: ${err.message}`);
      throw err;
    }
  };
  const plan: ExperimentPlan = { path, save: name('save', args.save), baseline: name('baseline', args.baseline) };
  if (plan.save !== undefined) {
    // What the save would refuse after every case ran, refused now: a link at the store's path (or its -wal, -shm),
    // and a folder that is not there to create the store in.
    refuseSymlinks(path, 'experiment store');
    if (!existsSync(path) && !isFolder(dirname(resolve(path))))
      throw new OutputFileError('io', `Cannot create the experiment store ${path}: the folder ${dirname(path)} does not exist.`);
  }
  if (!existsSync(path)) {
    if (plan.baseline !== undefined) throw new NotFoundError(`--baseline ${plan.baseline}: there is no experiment store at ${path} yet`);
    return plan;
  }
  const store = ExperimentStore.open(path, { readonly: true, fileMustExist: true });
  try {
    if (plan.baseline !== undefined && store.getExperiment(plan.baseline) === null) {
      const saved = store.listExperiments().map((e) => e.name);
      throw new NotFoundError(
        `--baseline: no experiment named "${plan.baseline}" in ${path}${saved.length > 0 ? ` (saved: ${saved.slice(0, 10).join(', ')})` : ''}`,
      );
    }
    // Replacing the baseline itself is allowed with --force: the comparison is made before the save.
    if (plan.save !== undefined && !args.force && store.getExperiment(plan.save) !== null)
      throw new ExperimentStoreError(
        'exists',
        `An experiment named "${plan.save}" is saved in ${path}; choose another name, or replace it with --force.`,
      );
  } finally {
    store.close();
  }
  return plan;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export interface ExperimentOutcome {
  comparison: BaselineComparison | null;
  saved: ExperimentSummary | null;
}

/**
 * The flips from the baseline (read only), or null without --baseline. Made before the save (which may replace the
 * baseline itself) and before the reports (the Markdown shows them).
 */
export function compareExperiment(plan: ExperimentPlan, report: CheckReport): BaselineComparison | null {
  if (plan.baseline === undefined) return null;
  const store = ExperimentStore.open(plan.path, { readonly: true, fileMustExist: true });
  try {
    return store.compareWithBaseline(plan.baseline, report);
  } finally {
    store.close();
  }
}

/** Saves the check as --save names it (after the reports are written: a save that fails loses no report). */
export function saveExperiment(plan: ExperimentPlan, report: CheckReport, force: boolean): ExperimentSummary | null {
  if (plan.save === undefined) return null;
  const store = ExperimentStore.open(plan.path);
  try {
    return store.saveExperiment(plan.save, report, { force });
  } finally {
    store.close();
  }
}

const FLIP_WORD = { regression: 'REGRESSION', fix: 'FIX', new: 'NEW', missing: 'MISSING' } as const;

/** The flips, regressions first (the store's order), one line each, and where the experiment was saved. */
export function experimentLines(outcome: ExperimentOutcome, plan: ExperimentPlan, color: boolean): string {
  const lines: string[] = [];
  const c = outcome.comparison;
  if (c) {
    const count = (kind: string) => c.flips.filter((f) => f.kind === kind).length;
    const parts = [
      `${count('regression')} regression${count('regression') === 1 ? '' : 's'}`,
      `${count('fix')} fix${count('fix') === 1 ? '' : 'es'}`,
      ...(count('new') > 0 ? [`${count('new')} new`] : []),
      ...(count('missing') > 0 ? [`${count('missing')} missing`] : []),
      `${c.unchanged} unchanged`,
    ];
    lines.push(`against baseline "${c.baseline.name}" (${c.baseline.startedAt}): ${parts.join(', ')}`);
    for (const f of c.flips) {
      const word = paint(color, f.kind === 'regression' ? 'red' : f.kind === 'fix' ? 'green' : 'yellow', FLIP_WORD[f.kind]);
      const reason = f.reason ? `  ${f.reason.replace(/\s+/g, ' ').slice(0, 300)}` : '';
      lines.push(`  ${word} ${f.caseId}  ${f.before ?? '-'} → ${f.after ?? '-'}${reason}`);
    }
  }
  if (outcome.saved) lines.push(`saved as experiment "${outcome.saved.name}" in ${plan.path}`);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
