import * as l10n from '@vscode/l10n';
import { hasInvisibleCharacter, hasLoneSurrogate, withoutInvisible } from './unicodeText';

/**
 * Branch-name validation shared by the tree's input box and the conversation view, so both reject the same names
 * before anything is written. Returns the problem, or undefined when the name is acceptable.
 */
export function branchNameProblem(name: string, usedIds: ReadonlySet<string>): string | undefined {
  if (name.trim() === '') return l10n.t('A branch name cannot be empty.');
  // The store keeps such names as given, but deleting trims them, so they could never be deleted by name.
  if (name !== name.trim()) return l10n.t('A branch name cannot start or end with spaces.');
  if (name === 'main') return l10n.t("'main' is the session's first branch; choose another name.");
  // C0 and C1, as the store refuses them (argumentChecks.ts): node:sqlite cuts TEXT at U+0000.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return l10n.t('A branch name cannot contain control characters.');
  // Half of a character (a lone UTF-16 surrogate): the store refuses it, as UTF-8 cannot hold it.
  if (hasLoneSurrogate(name)) return l10n.t('A branch name cannot contain half of a character.');
  // A name that looks like another (`main` and a zero-width space) or shows reordered: the store refuses it too.
  if (hasInvisibleCharacter(name)) return l10n.t('A branch name cannot contain invisible or direction-changing characters.');
  if (Array.from(name).length > 200) return l10n.t('A branch name can be at most {0} characters long.', 200);
  if (usedIds.has(name)) return l10n.t("'{0}' has already been used in this session (branch names are never reused).", name);
  return undefined;
}

/** How many code points of a model name go into a retry branch's name (model names can be long paths). */
const MODEL_IN_NAME = 60;

/**
 * Names for the new branches of a what-if run, one per model: `<prefix>-<model>-<n>` (for example `retry-gpt-4o-1`),
 * with the smallest `n` from 1 that makes a name no branch of the session ever had and that this call has not
 * handed out already, so two retries with the same model get two names. Whitespace in a model name becomes `-` and
 * control and invisible characters are dropped, so every name passes `branchNameProblem`.
 */
export function whatIfBranchNames(prefix: 'retry' | 'edit', models: readonly string[], usedIds: ReadonlySet<string>): string[] {
  const taken = new Set(usedIds);
  return models.map((model) => {
    // eslint-disable-next-line no-control-regex
    const printable = withoutInvisible(model.replace(/[\u0000-\u001f\u007f-\u009f]/g, ''));
    const clean = Array.from(printable.trim().replace(/\s+/g, '-')).slice(0, MODEL_IN_NAME).join('');
    const base = clean === '' ? prefix : `${prefix}-${clean}`;
    let n = 1;
    while (taken.has(`${base}-${n}`)) n++;
    const name = `${base}-${n}`;
    taken.add(name);
    return name;
  });
}

/**
 * The name offered for a branch from turn `turn` of `fromBranchId` (the tree's prompt and the view's *Branch here*
 * say the same): `<branch>-turn-<n>`, or with `-2`, `-3`, … when that was used; names are reserved forever.
 */
export function suggestedBranchName(fromBranchId: string, turn: number, usedIds: ReadonlySet<string>): string {
  const base = `${fromBranchId}-turn-${turn}`;
  if (!usedIds.has(base) && branchNameProblem(base, usedIds) === undefined) return base;
  for (let i = 2; ; i++) {
    const name = `${base}-${i}`;
    if (!usedIds.has(name)) return name;
  }
}
