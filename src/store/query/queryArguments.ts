/**
 * The checks of a query's arguments. They arrive as JSON from a model (the MCP server's schemas check types first,
 * the VS Code tools' do not always), so each check names the argument, says what it got and what it takes, and shows
 * a call written the right way.
 */
import type { BranchNode } from '../inspector/inspectorTypes';
import { callText } from './queryAnswer';
import { QueryError, someOf } from './queryErrors';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

/** A whole number argument in `min`…`max`, or `fallback` when it is absent. */
export function intArgument(
  tool: string,
  name: string,
  value: unknown,
  range: { min: number; max: number; fallback: number },
  example: Record<string, unknown>,
): number {
  if (value === undefined || value === null) return range.fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
    throw new QueryError(
      'bad-argument',
      `${name} must be a whole number from ${range.min} to ${range.max}, got ${JSON.stringify(value)}. Example: ${callText(tool, { ...example, [name]: Math.min(range.max, Math.max(range.min, range.fallback)) })}`,
    );
  }
  return value;
}

/** A required, non-empty string argument. */
export function stringArgument(tool: string, name: string, value: unknown, example: Record<string, unknown>): string {
  if (typeof value !== 'string' || value === '') {
    throw new QueryError(
      'bad-argument',
      `${name} is required: a non-empty string${value === undefined ? '' : `, got ${JSON.stringify(value)}`}. Example: ${callText(tool, example)}`,
    );
  }
  return value;
}

/** An optional string argument (absent, null or '' = not given). */
export function optionalString(tool: string, name: string, value: unknown, example: Record<string, unknown>): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string')
    throw new QueryError('bad-argument', `${name} must be a string, got ${JSON.stringify(value)}. Example: ${callText(tool, example)}`);
  return value;
}

/**
 * The session's branch tree; throws `unknown-session` (naming a few sessions that exist) when the store has no such
 * session.
 */
export async function requireSession(tool: string, store: QueryStore, sessionId: string): Promise<BranchNode[]> {
  const tree = await store.reader.getBranchTree(sessionId);
  if (tree.length > 0 || (await store.hasSession(sessionId))) return tree;
  const ids = (await store.listSessions()).map((s) => s.sessionId);
  throw new QueryError(
    'unknown-session',
    `Store "${store.name}" has no session ${JSON.stringify(sessionId)}. Sessions there: ${someOf(ids)}. ` +
      (ids.length > 0
        ? `Example: ${callText(tool, { store: store.name, session: ids[0] })}; list_sessions {"store":"${store.name}"} lists them all.`
        : 'The store is empty.'),
  );
}

/** The branch asked for, or (none asked for) `main`, else the first branch; throws `unknown-branch` naming the others. */
export function pickBranch(
  tool: string,
  store: QueryStore,
  sessionId: string,
  tree: readonly BranchNode[],
  branchId: string | undefined,
): BranchNode {
  if (branchId === undefined) {
    const b = tree.find((x) => x.branchId === 'main') ?? tree[0];
    if (!b)
      throw new QueryError(
        'unknown-branch',
        `Session ${JSON.stringify(sessionId)} of store "${store.name}" has no items yet, so no branch to read.`,
      );
    return b;
  }
  const b = tree.find((x) => x.branchId === branchId);
  if (b) return b;
  const ids = tree.map((x) => x.branchId);
  throw new QueryError(
    'unknown-branch',
    `Session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(branchId)}. Its branches: ${someOf(ids, 10)}. ` +
      `Example: ${callText(tool, { store: store.name, session: sessionId, branch: ids[0] ?? 'main' })}`,
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
  /** A call with these arguments, for the examples the tool's other messages give. */
  example: { store: string; session: string; turn: number };
}

/** Reads `session`, `branch` and `turn` (required; `what`: "the turn whose timeline to show") as every turn tool does. */
export function turnArguments(
  tool: string,
  store: QueryStore,
  args: { session?: unknown; branch?: unknown; turn?: unknown },
  what: string,
): TurnArguments {
  const sessionId = stringArgument(tool, 'session', args.session, { store: store.name, session: 'my-session', turn: 1 });
  const example = { store: store.name, session: sessionId, turn: 1 };
  const branchArg = optionalString(tool, 'branch', args.branch, { ...example, branch: 'main' });
  const turn = intArgument(tool, 'turn', args.turn, { min: 1, max: Number.MAX_SAFE_INTEGER, fallback: Number.NaN }, example);
  if (Number.isNaN(turn)) throw new QueryError('bad-argument', `turn is required: ${what}. Example: ${tool} ${JSON.stringify(example)}`);
  return { sessionId, branchArg, turn, example };
}

/** The session's branch tree and the branch the turn is read on, or the errors that say which does not exist. */
export async function requireTurn(
  tool: string,
  store: QueryStore,
  at: TurnArguments,
): Promise<{ tree: readonly BranchNode[]; branch: BranchNode }> {
  const tree = await requireSession(tool, store, at.sessionId);
  const branch = pickBranch(tool, store, at.sessionId, tree, at.branchArg);
  if (at.turn > branch.userTurns && !branch.userTurnsAtLeast)
    throw new QueryError(
      'unknown-turn',
      `Branch "${branch.branchId}" has ${counted(branch.userTurns, 'turn')}, so no turn ${at.turn}. Example: ${tool} ${JSON.stringify({ ...at.example, branch: branch.branchId })}`,
    );
  return { tree, branch };
}
