/**
 * Two branches of a session compared as text, lined up as the compare view lines them up (src/shared/compare: the
 * turns both got from a common ancestor are skipped, then turn k of one is set against turn k of the other, texts
 * diffed word by word, tool calls matched by name in order, arguments diffed structurally). Changes are marked in
 * the text as `[-removed-]` (only in the baseline) and `{+added+}` (only in the other branch).
 */
import { compareRow, rowCount, rowTurn, sharedTurnsByFork, type SideFacts } from '../../shared/compare/alignment';
import { turnContent } from '../../shared/compare/turnContent';
import type { CompareRowView, CompareSideView, CompareToolView, DiffPiece } from '../../shared/protocol/compareViews';
import { turnOrigin } from '../../shared/turnOrigin';
import type { BranchNode } from '../inspector/inspectorTypes';
import { answer, sourceOf, type QueryAnswer } from './queryAnswer';
import { dataValue } from './dataBlock';
import { intArgument, pickBranch, requireSession, stringArgument } from './queryArguments';
import { QueryError, checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, DEFAULT_MAX_TURNS, MAX_MAX_CHARS, MAX_MAX_TURNS, TextBudget } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

export interface CompareArgs {
  session: string;
  /** The baseline. */
  branch: string;
  /** The branch compared with it. */
  otherBranch: string;
  /** Rows after this turn (default: from the first turn the branches do not share). */
  afterTurn?: number;
  maxTurns?: number;
  maxChars?: number;
}

/** A tool call's arguments or output longer than this is cut in a comparison (read_turns shows it whole). */
const TOOL_TEXT_CHARS = 800;

function pieces(list: readonly DiffPiece[]): string {
  return list.map((p) => (p.change === 'removed' ? `[-${p.text}-]` : p.change === 'added' ? `{+${p.text}+}` : p.text)).join('');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${counted(text.length - max, 'more character')})` : text;
}

/**
 * A tool call as a line. `only`: the branch that alone has the turn, whose calls are then that branch's alone (the
 * row's plain side marks them `same`, which would read as "the other branch made it too").
 */
function toolLine(t: CompareToolView, names: readonly [string, string], only: string | null): string {
  const changes = t.argumentChanges.map((c) =>
    c.kind === 'added'
      ? `${c.path} added ${c.after}`
      : c.kind === 'removed'
        ? `${c.path} removed (was ${c.before})`
        : `${c.path}: ${c.before} → ${c.after}`,
  );
  const how =
    only !== null
      ? `only in ${only}`
      : t.status === 'changed'
        ? `changed${changes.length > 0 ? `: ${changes.join('; ')}` : ''}${t.outputChanged ? '; output differs' : ''}`
        : t.status === 'removed'
          ? `only in ${names[0]}`
          : t.status === 'added'
            ? `only in ${names[1]}`
            : 'same';
  const output = t.output === null ? 'no output' : `→ ${clip(t.output, TOOL_TEXT_CHARS)}`;
  return `  - ${t.name}(${clip(t.arguments, TOOL_TEXT_CHARS)}) ${output} [${how}]`;
}

function usageText(side: CompareSideView | null): string {
  if (!side) return '–';
  return side.usage?.totalTokens !== null && side.usage?.totalTokens !== undefined
    ? counted(side.usage.totalTokens, 'token')
    : 'no usage row';
}

function rowText(row: CompareRowView, names: readonly [string, string]): string {
  const [a, b] = row.sides as [CompareSideView | null, CompareSideView | null];
  const lines = [`## Turn ${row.turn} — ${row.differs ? 'differs' : 'same'}`];
  for (const [i, side] of [a, b].entries()) if (!side) lines.push(`(${names[i]} has no turn ${row.turn})`);
  const part = (label: string, get: (s: CompareSideView) => DiffPiece[]) => {
    const x = a ? pieces(get(a)) : null;
    const y = b ? pieces(get(b)) : null;
    if (x !== null && y !== null && x === y) lines.push(`${label} (both): ${x || '(none)'}`);
    else {
      if (x !== null) lines.push(`${label} (${names[0]}): ${x || '(none)'}`);
      if (y !== null) lines.push(`${label} (${names[1]}): ${y || '(none)'}`);
    }
  };
  part('User', (s) => s.user);
  part('Assistant', (s) => s.assistant);
  for (const [i, side] of [a, b].entries()) {
    if (!side || side.tools.length === 0) continue;
    const only = (i === 0 ? b : a) === null ? names[i]! : null;
    lines.push(`Tool calls (${names[i]}):`, ...side.tools.map((t) => toolLine(t, names, only)));
  }
  lines.push(`Tokens: ${names[0]} ${usageText(a)} · ${names[1]} ${usageText(b)}`);
  return `${lines.join('\n')}\n\n`;
}

async function side(
  store: QueryStore,
  sessionId: string,
  tree: readonly BranchNode[],
  branch: BranchNode,
  turn: number,
): Promise<SideFacts | null> {
  if (turn > branch.userTurns) return null;
  const items = await store.reader.getTurnItems(sessionId, branch.branchId, turn);
  const content = turnContent(
    turn,
    items.map((e) =>
      e.corrupt ? { corrupt: true as const, createdAt: e.createdAt } : { corrupt: false as const, item: e.item, createdAt: e.createdAt },
    ),
  );
  // A turn's usage row is on the branch that ran it (a shared turn's on an ancestor).
  const row = store.keepsUsage
    ? (await store.reader.getTurnUsage(sessionId, turnOrigin(tree, branch.branchId, turn), turn, turn))[0]
    : undefined;
  return {
    content,
    usage: row
      ? {
          inputTokens: row.inputTokens,
          outputTokens: row.outputTokens,
          totalTokens: row.totalTokens,
          cachedTokens: row.cachedTokens,
          reasoningTokens: row.reasoningTokens,
        }
      : null,
    cost: null,
  };
}

export async function compareBranches(store: QueryStore, args: CompareArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const sessionId = stringArgument('session', args.session);
  const baseId = stringArgument('branch', args.branch);
  const otherId = stringArgument('otherBranch', args.otherBranch);
  const maxTurns = intArgument('maxTurns', args.maxTurns, { min: 1, max: MAX_MAX_TURNS, fallback: DEFAULT_MAX_TURNS });
  const maxChars = intArgument('maxChars', args.maxChars, { min: 200, max: MAX_MAX_CHARS, fallback: DEFAULT_MAX_CHARS });
  const afterArg = intArgument('afterTurn', args.afterTurn, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  checkCancelled(signal);
  const tree = await requireSession(store, sessionId);
  const base = pickBranch(store, sessionId, tree, baseId);
  const other = pickBranch(store, sessionId, tree, otherId, 'otherBranch');
  if (base.branchId === other.branchId) {
    throw new QueryError(
      'bad-argument',
      `branch and otherBranch are both ${dataValue(base.branchId)}: name two different branches.${tree.length < 2 ? ' The session has only one branch.' : ''}`,
      { drop: ['otherBranch'] },
    );
  }
  const counts = [base.userTurns, other.userTurns];
  const shared = sharedTurnsByFork(tree, [base.branchId, other.branchId], counts);
  const rows = rowCount(shared, counts);
  const names = [base.branchId, other.branchId] as const;
  const start = Math.max(0, afterArg - shared);
  const head = [
    `Comparing branch ${JSON.stringify(base.branchId)} (baseline, ${counted(base.userTurns, 'turn')}) with ${JSON.stringify(other.branchId)} (${counted(other.userTurns, 'turn')}).`,
    shared > 0
      ? `Turns 1–${shared} are shared (the same items on both); the comparison starts at turn ${shared + 1}.`
      : 'They share no turns.',
    `Marks: [-text-] only in ${base.branchId}, {+text+} only in ${other.branchId}.`,
  ].join('\n');
  if (rows === 0 || start >= rows) {
    const body =
      rows === 0
        ? `${head}\n\nNothing after the shared turns: the branches hold the same conversation.`
        : `${head}\n\nNo turns after turn ${afterArg}.`;
    return answer(sourceOf(store, sessionId), body, null);
  }
  const end = Math.min(rows, start + maxTurns);
  const summary = (differ: number, shownRows: number) =>
    `${head}\n${differ} of the ${counted(shownRows, 'turn')} shown ${differ === 1 ? 'differs' : 'differ'}.\n\n`;
  // The heading counts in maxChars too: the rows get what it leaves at its longest (every row of the page shown).
  const budget = new TextBudget(Math.max(1, maxChars - summary(end - start, end - start).length));
  let shownTo = -1;
  let differing = 0;
  for (let i = start; i < end; i++) {
    checkCancelled(signal);
    const turn = rowTurn(shared, i);
    const row = compareRow(i, turn, [await side(store, sessionId, tree, base, turn), await side(store, sessionId, tree, other, turn)]);
    if (!budget.add(rowText(row, names))) break;
    shownTo = i;
    if (row.differs) differing++;
    if (budget.cutChars > 0) break;
  }
  const firstTurn = rowTurn(shared, start);
  const lastTurn = rowTurn(shared, shownTo);
  const left = rows - (shownTo + 1);
  const source = { ...sourceOf(store, sessionId), turns: { from: firstTurn, to: lastTurn } };
  return answer(
    source,
    `${summary(differing, shownTo - start + 1)}${budget.text()}`,
    left > 0 ? { afterTurn: lastTurn } : null,
    [
      budget.cutChars > 0
        ? `… turn ${lastTurn} was cut (${counted(budget.cutChars, 'more character')}); read it whole with read_turns turn=${lastTurn}.`
        : '',
      left > 0 ? `… truncated: ${counted(left, 'more turn')} — call compare_branches again with afterTurn=${lastTurn}.` : '',
    ]
      .filter(Boolean)
      .join('\n') || undefined,
  );
}
