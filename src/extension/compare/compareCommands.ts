/** *Compare with…* (tree, palette, the conversation view's header) and the comparison other commands open. */
import * as vscode from 'vscode';
import { MAX_COMPARE_COLUMNS } from '../../shared/protocol/compare';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import { arg, badArgument } from '../core/commandArgs';
import { pickSession } from '../databases/pickers';
import { compareBranchItem } from '../databases/pickItems';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { command, type CommandsOf } from '../core/commandTable';
import type { Services } from '../services';
import { asNode } from '../core/treeNodes';
import { UserFacingError } from '../core/userError';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A target passed by a caller (a menu, a test, the retry commands): checked, since it comes from outside. */
export function asCompareTarget(v: unknown): CompareTarget | undefined {
  if (!isObj(v) || typeof v.dbPath !== 'string' || typeof v.sessionId !== 'string' || typeof v.branchId !== 'string') return undefined;
  return {
    dbPath: v.dbPath,
    sessionId: v.sessionId,
    branchId: v.branchId,
    ...(typeof v.label === 'string' ? { label: v.label } : {}),
    ...(typeof v.runMs === 'number' && Number.isFinite(v.runMs) ? { runMs: v.runMs } : {}),
    ...(typeof v.model === 'string' && v.model.trim() !== '' ? { model: v.model.trim() } : {}),
    ...(v.unpriced === true ? { unpriced: true as const } : {}),
  };
}

const OTHER_SESSION = Symbol('other session');

/**
 * Asks for a branch to compare `with` against: the other branches of its session first (with where they forked),
 * then "a branch of another session…" (any open database). Undefined when dismissed.
 */
export async function pickBranchToCompare(
  registry: DatabaseRegistry,
  against: CompareTarget,
  title = vscode.l10n.t('Compare {0} with…', against.branchId),
): Promise<CompareTarget | undefined> {
  const db = registry.require(against.dbPath).db;
  const tree = db ? await db.getBranchTree(against.sessionId) : [];
  type Item = vscode.QuickPickItem & { branchId?: string; other?: typeof OTHER_SESSION };
  const items: Item[] = tree.filter((b) => b.branchId !== against.branchId).map((b) => ({ ...compareBranchItem(b), branchId: b.branchId }));
  items.push({ label: `$(files) ${vscode.l10n.t('A branch of another session…')}`, other: OTHER_SESSION });
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: vscode.l10n.t('Branch to compare with') });
  if (!pick) return undefined;
  if (pick.branchId !== undefined) return { dbPath: against.dbPath, sessionId: against.sessionId, branchId: pick.branchId };
  const session = await pickSession(registry);
  if (!session) return undefined;
  const other = registry.require(session.dbPath).db;
  const branches = other ? await other.getBranchTree(session.sessionId) : [];
  if (branches.length === 1) return { ...session, branchId: branches[0]!.branchId };
  const branch = await vscode.window.showQuickPick(
    branches.map((b) => ({ ...compareBranchItem(b), branchId: b.branchId })),
    { title: vscode.l10n.t('Branch of {0}', session.sessionId) },
  );
  return branch ? { ...session, branchId: branch.branchId } : undefined;
}

/**
 * *Compare with…*: `first` is a branch node (or a session node: its current branch) or a target; `other` skips the
 * picker (tests, the conversation view). From the palette it asks for the session and branch first. Resolves with
 * the two branches compared, undefined when cancelled.
 */
export async function compareWith(s: Services, firstArg: unknown, otherArg?: unknown): Promise<CompareTarget[] | undefined> {
  const { registry } = s;
  const node = asNode(firstArg, 'branch', 'session') ?? asCompareTarget(firstArg);
  if (firstArg !== undefined && !node) badArgument(vscode.l10n.t('Compare with…'), vscode.l10n.t('a branch'));
  let first: CompareTarget | undefined;
  if (node && 'branchId' in node) first = { dbPath: node.dbPath, sessionId: node.sessionId, branchId: node.branchId };
  else {
    const session = node ?? (await pickSession(registry));
    if (!session) return undefined;
    first = { dbPath: session.dbPath, sessionId: session.sessionId, branchId: registry.currentBranch(session.dbPath, session.sessionId) };
  }
  const second =
    otherArg !== undefined
      ? (asCompareTarget(otherArg) ?? badArgument(vscode.l10n.t('Compare with…'), vscode.l10n.t('a branch to compare with')))
      : await pickBranchToCompare(registry, first);
  if (!second) return undefined;
  s.compare.open([first, second]);
  return [first, second];
}

/** Opens a comparison of the given branches (2–5, the first is the baseline); the retry commands use it. */
export function compareBranches(s: Services, list: unknown): CompareTarget[] {
  if (!Array.isArray(list)) return badArgument(vscode.l10n.t('Compare Branches'), vscode.l10n.t('a list of branches'));
  const targets = list.map(
    (t) =>
      asCompareTarget(t) ?? badArgument(vscode.l10n.t('Compare Branches'), vscode.l10n.t('branches ({ dbPath, sessionId, branchId })')),
  );
  if (targets.length < 2 || targets.length > MAX_COMPARE_COLUMNS)
    throw new UserFacingError(vscode.l10n.t('Compare Branches takes 2 to {0} branches, got {1}.', MAX_COMPARE_COLUMNS, targets.length));
  s.compare.open(targets);
  return targets;
}

export function compareCommands(s: Services): CommandsOf<'compareWith' | 'compareBranches'> {
  return {
    compareWith: command(vscode.l10n.t('Compare with…'), [arg.any, arg.any], (first, other) => compareWith(s, first, other)),
    compareBranches: command(vscode.l10n.t('Compare Branches'), [arg.any], (list) => compareBranches(s, list)),
  };
}
