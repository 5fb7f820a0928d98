/**
 * How the compare view lines branches up. Turns are compared by number: once branches stop sharing turns, turn k of
 * one is set against turn k of the others, so a retry of turn 3 sits beside the original turn 3. Branches of one
 * session share the turns a common ancestor ran (known from the fork structure, nothing read); branches of
 * different sessions share the first turns whose items are equal (compared by the caller, a page at a time).
 * Tool calls of a pair of turns are matched by tool name in order (jsdiff's array diff), so an extra call in one
 * column does not misalign every call after it.
 */
import { diffArrays } from 'diff';
import type { CompareToolView, CompareSideView, CompareRowView } from '../protocol/compareViews';
import { turnOrigin, type ForkFacts } from '../turnOrigin';
import { diffJsonText } from './jsonDiff';
import { diffText, plainPieces } from './textDiff';
import { argumentsKey, parseArguments } from './toolArguments';
import type { ToolCallContent, TurnContent } from './turnContent';
import type { CompareUsage } from '../protocol/compareViews';

/**
 * How many first turns every branch of `branchIds` (one session) shares: the turns each of them got from the same
 * branch. Once two branches' turn k came from different branches, no later turn is shared either (a turn is only
 * copied together with every turn before it).
 */
export function sharedTurnsByFork(branches: readonly ForkFacts[], branchIds: readonly string[], turnCounts: readonly number[]): number {
  if (branchIds.length === 0) return 0;
  const limit = Math.min(...turnCounts);
  const [first, ...rest] = branchIds as [string, ...string[]];
  // The answer is a fork turn minus one (or `limit`): try those, not every turn of a 10,000-turn branch.
  const candidates = new Set<number>([limit]);
  for (const b of branches) if (b.forkTurn !== null && b.forkTurn - 1 < limit) candidates.add(Math.max(0, b.forkTurn - 1));
  const sameAt = (turn: number): boolean => {
    const origin = turnOrigin(branches, first, turn);
    return rest.every((id) => turnOrigin(branches, id, turn) === origin);
  };
  let shared = 0;
  for (const k of [...candidates].sort((a, b) => a - b)) {
    // Shared up to k when turn k is shared (then every turn before it is too).
    if (k > 0 && sameAt(k)) shared = k;
    else if (k > 0) break;
  }
  return shared;
}

/** The turn a row shows on every column. */
export function rowTurn(sharedTurns: number, index: number): number {
  return sharedTurns + 1 + index;
}

/** Rows to show: the longest column's turns after the shared ones. */
export function rowCount(sharedTurns: number, turnCounts: readonly number[]): number {
  return Math.max(0, ...turnCounts.map((n) => n - sharedTurns));
}

/** What one column's turn brings to a row besides its items. */
export interface SideFacts {
  content: TurnContent;
  usage: CompareUsage | null;
  cost: number | null;
  /** From the turn's traces (the trace store), when any is linked to it. */
  latency?: { ms: number; requests: number } | null;
}

/**
 * One row: every column's side, each non-baseline side diffed against the baseline's (column 0). The baseline marks
 * what the other column dropped only when there are exactly two columns; with more, each column says how it
 * differs from the baseline and the baseline reads plain.
 */
export function compareRow(index: number, turn: number, sides: readonly (SideFacts | null)[]): CompareRowView {
  const base = sides[0] ?? null;
  const pair = sides.length === 2;
  const views: (CompareSideView | null)[] = sides.map((s) => (s ? plainSide(s) : null));
  let differs = sides.some((s) => s === null);
  for (let i = 1; i < sides.length; i++) {
    const side = sides[i];
    const view = views[i];
    if (!side || !view || !base) continue;
    const user = diffText(base.content.user, side.content.user);
    const assistant = diffText(base.content.assistant, side.content.assistant);
    const tools = matchTools(base.content.tools, side.content.tools);
    view.user = user.after;
    view.assistant = assistant.after;
    view.tools = tools.after;
    view.differs = user.changed || assistant.changed || tools.changed;
    differs ||= view.differs;
    const baseView = views[0];
    if (pair && baseView) {
      baseView.user = user.before;
      baseView.assistant = assistant.before;
      baseView.tools = tools.before;
    }
  }
  return { index, turn, sides: views, differs };
}

function plainSide(s: SideFacts): CompareSideView {
  const c = s.content;
  return {
    turn: c.turn,
    createdAt: c.createdAt,
    user: plainPieces(c.user),
    assistant: plainPieces(c.assistant),
    tools: c.tools.map((t) => toolView(t, 'same')),
    otherItems: c.otherItems,
    usage: s.usage,
    cost: s.cost,
    latencyMs: s.latency?.ms ?? null,
    tracedRequests: s.latency?.requests ?? null,
    differs: false,
    unreadable: c.unreadable,
  };
}

function toolView(t: ToolCallContent, status: CompareToolView['status']): CompareToolView {
  return { callId: t.callId, name: t.name, arguments: t.arguments, output: t.output, status, argumentChanges: [], outputChanged: false };
}

type ToolStep = { pair: [number, number] } | { removed: number } | { added: number };

/** The steps of `diffArrays` over two key lists, indices offset by `i0`/`j0`. */
function steps(before: string[], after: string[], i0: number, j0: number): ToolStep[] {
  const out: ToolStep[] = [];
  let i = i0;
  let j = j0;
  for (const part of diffArrays(before, after)) {
    const n = part.count ?? part.value.length;
    for (let k = 0; k < n; k++) {
      if (part.removed) out.push({ removed: i++ });
      else if (part.added) out.push({ added: j++ });
      else out.push({ pair: [i++, j++] });
    }
  }
  return out;
}

/**
 * Matches two turns' tool calls: equal calls (same name and arguments as JSON values) first, then, between those, the
 * rest by name in order. Pairing by name alone would pair calls of one name by position, so a call added before an
 * equal one would read as two changed calls instead of one added. A matched pair is `same` or `changed` (arguments
 * diffed structurally, output compared); unmatched calls are `removed` (baseline) or `added`.
 */
export function matchTools(
  before: readonly ToolCallContent[],
  after: readonly ToolCallContent[],
): { before: CompareToolView[]; after: CompareToolView[]; changed: boolean } {
  const key = (t: ToolCallContent) => `${t.name}\u0000${argumentsKey(parseArguments(t.arguments))}`;
  const plan: ToolStep[] = [];
  let i0 = 0;
  let j0 = 0;
  // The calls between two equal pairs (and after the last) are matched by name.
  const byName = (i1: number, j1: number) => {
    plan.push(
      ...steps(
        before.slice(i0, i1).map((t) => t.name),
        after.slice(j0, j1).map((t) => t.name),
        i0,
        j0,
      ),
    );
  };
  for (const step of steps(before.map(key), after.map(key), 0, 0)) {
    if (!('pair' in step)) continue;
    byName(step.pair[0], step.pair[1]);
    plan.push(step);
    [i0, j0] = [step.pair[0] + 1, step.pair[1] + 1];
  }
  byName(before.length, after.length);
  const b: CompareToolView[] = [];
  const a: CompareToolView[] = [];
  let changed = false;
  for (const step of plan) {
    if ('removed' in step) {
      b.push(toolView(before[step.removed]!, 'removed'));
      changed = true;
    } else if ('added' in step) {
      a.push(toolView(after[step.added]!, 'added'));
      changed = true;
    } else {
      const x = before[step.pair[0]]!;
      const y = after[step.pair[1]]!;
      const argumentChanges = x.arguments === y.arguments ? [] : diffJsonText(x.arguments, y.arguments);
      const outputChanged = x.output !== y.output;
      const status = argumentChanges.length > 0 || outputChanged ? 'changed' : 'same';
      if (status === 'changed') changed = true;
      b.push({ ...toolView(x, status), outputChanged });
      a.push({ ...toolView(y, status), argumentChanges, outputChanged });
    }
  }
  return { before: b, after: a, changed };
}
