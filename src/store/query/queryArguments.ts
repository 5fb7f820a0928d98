/**
 * The checks of a query's arguments. They arrive as JSON from a model (neither the MCP server nor the VS Code tools
 * check them against the schema first: the checks here know the store, so their errors end with a call that works),
 * so each check names the argument, says what it got and what it takes; the tool's run adds the example
 * (queryExamples.ts) from the `CallFix` the error carries.
 */
import type { BranchNode } from '../inspector/inspectorTypes';
import { callText } from './queryAnswer';
import { dataValue } from './dataBlock';
import { QueryError, someOf } from './queryErrors';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

/** What a whole number argument takes, in words: "from 1 to 200", or "0 or more" when there is no real ceiling. */
function rangeText(range: { min: number; max: number }): string {
  return range.max >= Number.MAX_SAFE_INTEGER ? `${range.min} or more` : `from ${range.min} to ${range.max}`;
}

/**
 * A whole number argument in `min`…`max`, or `fallback` when it is absent. A bad one is an error whose example leaves
 * it out (or, for a required one, fills in a value that exists).
 */
export function intArgument(name: string, value: unknown, range: { min: number; max: number; fallback: number }): number {
  if (value === undefined || value === null) return range.fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
    throw new QueryError('bad-argument', `${name} must be a whole number ${rangeText(range)}, got ${JSON.stringify(value)}.`, {
      drop: [name],
    });
  }
  return value;
}

/** A required, non-empty string argument. */
export function stringArgument(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new QueryError(
      'bad-argument',
      `${name} is required: a non-empty string${value === undefined ? '' : `, got ${JSON.stringify(value)}`}.`,
      { drop: [name] },
    );
  }
  return value;
}

/** An optional string argument (absent, null or '' = not given). */
export function optionalString(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string')
    throw new QueryError('bad-argument', `${name} must be a string, got ${JSON.stringify(value)}.`, { drop: [name] });
  return value;
}

/**
 * The session's branch tree; throws `unknown-session` (naming a few sessions that exist) when the store has no such
 * session.
 */
export async function requireSession(store: QueryStore, sessionId: string): Promise<BranchNode[]> {
  const tree = await store.reader.getBranchTree(sessionId);
  if (tree.length > 0 || (await store.hasSession(sessionId))) return tree;
  const ids = (await store.listSessions()).map((s) => s.sessionId);
  throw new QueryError(
    'unknown-session',
    `Store ${JSON.stringify(store.name)} has no session ${dataValue(sessionId)}. Sessions there: ${someOf(ids)}. ` +
      (ids.length > 0 ? `${callText('list_sessions', { store: store.name })} lists them all.` : 'The store is empty.'),
    { drop: ['session'] },
  );
}

/**
 * The branch asked for (in argument `argName`), or (none asked for) `main`, else the first branch; throws
 * `unknown-branch` naming the others.
 */
export function pickBranch(
  store: QueryStore,
  sessionId: string,
  tree: readonly BranchNode[],
  branchId: string | undefined,
  argName = 'branch',
): BranchNode {
  if (branchId === undefined) {
    const b = tree.find((x) => x.branchId === 'main') ?? tree[0];
    if (!b)
      throw new QueryError(
        'unknown-branch',
        `Session ${dataValue(sessionId)} of store ${JSON.stringify(store.name)} has no items yet, so no branch to read.`,
        { drop: ['session'] },
      );
    return b;
  }
  const b = tree.find((x) => x.branchId === branchId);
  if (b) return b;
  const ids = tree.map((x) => x.branchId);
  throw new QueryError(
    'unknown-branch',
    `Session ${dataValue(sessionId)} has no branch ${dataValue(branchId)}${argName === 'branch' ? '' : ` (${argName})`}. Its branches: ${someOf(ids, 10)}.`,
    // The example names a branch that exists (the example's check moves it on when it cannot serve the call).
    { set: { [argName]: (tree.find((x) => x.branchId === 'main') ?? tree[0])?.branchId } },
  );
}

/** Turns stored once: a forked branch's first fork-turn − 1 turns are its parent's. */
export function ownTurns(b: BranchNode): number {
  return b.parentBranchId !== null && b.forkTurn !== null ? Math.max(0, b.userTurns - (b.forkTurn - 1)) : b.userTurns;
}

/** A tool's arguments that name one turn of one session: `session`, optional `branch`, required `turn`. */
export interface TurnArguments {
  sessionId: string;
  branchArg: string | undefined;
  turn: number;
}

/** Reads `session`, `branch` and `turn` (required; `what`: "the turn whose timeline to show") as every turn tool does. */
export function turnArguments(args: { session?: unknown; branch?: unknown; turn?: unknown }, what: string): TurnArguments {
  const sessionId = stringArgument('session', args.session);
  const branchArg = optionalString('branch', args.branch);
  const turn = intArgument('turn', args.turn, { min: 1, max: Number.MAX_SAFE_INTEGER, fallback: Number.NaN });
  if (Number.isNaN(turn)) throw new QueryError('bad-argument', `turn is required: ${what}.`, { drop: ['turn'] });
  return { sessionId, branchArg, turn };
}

/** The session's branch tree and the branch the turn is read on, or the errors that say which does not exist. */
export async function requireTurn(store: QueryStore, at: TurnArguments): Promise<{ tree: readonly BranchNode[]; branch: BranchNode }> {
  const tree = await requireSession(store, at.sessionId);
  const branch = pickBranch(store, at.sessionId, tree, at.branchArg);
  if (at.turn > branch.userTurns && !branch.userTurnsAtLeast)
    throw new QueryError(
      'unknown-turn',
      `Branch ${dataValue(branch.branchId)} of session ${dataValue(at.sessionId)} has ${counted(branch.userTurns, 'turn')}, so no turn ${at.turn}.`,
      { drop: ['turn'] },
    );
  return { tree, branch };
}
