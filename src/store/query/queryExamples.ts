/**
 * The call an error ends with (docs/mcp.md: a bad argument "shows a call that works"). A model copies the example it
 * is given, so a template with made-up values (`"session":"my-session"`, two branches both "main") sends it round in
 * circles: the example here is the caller's own call with the error's fix applied, its arguments checked against the
 * store and kept when valid, and what is missing or wrong filled with values that exist (a session, a branch, a turn),
 * then run once to be sure it succeeds (all but a search, whose example is right by construction and whose run would
 * scan the store).
 */
import type { BranchNode } from '../inspector/inspectorTypes';
import { callText } from './queryAnswer';
import { QueryError, checkCancelled, type CallFix } from './queryErrors';
import { DATA_VALUE_LIMIT } from './dataBlock';
import { DEFAULT_MAX_TURNS, MAX_AFTER_HIT } from './queryLimits';
import type { QueryStore } from './queryStore';
import { parseToolQuery } from './searchQueries';

/**
 * What an example needs of a tool (as queryTools.ts defines it, which imports this file: written out here, not
 * imported back): its name, its parameters' types and ranges, and its run without an example of its own, `H` its host.
 */
export interface ExampleTool<H> {
  name: string;
  parameters: Record<string, { type: 'string' | 'integer'; minimum?: number; maximum?: number }>;
  run(host: H, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** Arguments that name something in one session: never carried over to another session. */
const SESSION_BOUND = new Set(['session', 'branch', 'otherBranch', 'turn', 'afterTurn', 'charOffset', 'afterItem', 'afterSpan']);

/** The query an example of search_sessions takes when the caller's cannot be kept. */
const SAMPLE_QUERY = 'role:user';

/** Sessions whose branch trees are read to find one an example fits (a store may hold 100,000). */
const SESSIONS_TRIED = 25;

/** What a tool needs of a session for a call to succeed. */
type Need = 'session' | 'branch' | 'turn' | 'two-branches';

function needOf(tool: string, args: Record<string, unknown>): Need | null {
  switch (tool) {
    case 'branch_tree':
    case 'token_usage':
      return 'session';
    case 'read_turns':
      return typeof args.turn === 'number' && args.turn >= 1 ? 'turn' : 'branch';
    case 'compare_branches':
      return 'two-branches';
    case 'turn_timeline':
    case 'turn_context':
      return 'turn';
    default:
      return null;
  }
}

/** Whether `value` is what parameter `name` takes: its type and range (the queries' own ranges). */
function validValue(tool: ExampleTool<never>, name: string, value: unknown): boolean {
  const p = tool.parameters[name];
  if (!p) return false;
  if (p.type === 'string') return typeof value === 'string' && value !== '';
  const max = p.maximum ?? (name === 'afterHit' ? MAX_AFTER_HIT : Number.MAX_SAFE_INTEGER);
  return typeof value === 'number' && Number.isInteger(value) && value >= (p.minimum ?? 0) && value <= max;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * Whether an id from the store may go into an example: an id is session content, which errors show cut at the data
 * limit (someOf), and a cut id would make the example fail; one that long is written to be read, not a real id.
 */
const showable = (id: string): boolean => id.length <= DATA_VALUE_LIMIT;

/**
 * The session-bound arguments of a call on `sessionId` that `need` allows, the caller's (`given`) kept where they
 * exist there; null when the session cannot serve the call (no branch, no turn, one branch).
 */
async function fitSession(
  tool: ExampleTool<never>,
  store: QueryStore,
  sessionId: string,
  given: Record<string, unknown>,
  need: Need,
): Promise<Record<string, unknown> | null> {
  const tree = (await store.reader.getBranchTree(sessionId)).filter((b) => showable(b.branchId) || b.branchId === given.branch);
  if (tree.length === 0) return need === 'session' && (await store.hasSession(sessionId)) ? { session: sessionId } : null;
  const out: Record<string, unknown> = { session: sessionId };
  const byId = (id: unknown): BranchNode | undefined => (typeof id === 'string' ? tree.find((b) => b.branchId === id) : undefined);
  const main = tree.find((b) => b.branchId === 'main') ?? tree[0]!;
  const askedBranch = given.branch !== undefined && given.branch !== null && given.branch !== '';
  if (need === 'two-branches') {
    if (tree.length < 2) return null;
    const base = byId(given.branch) ?? main;
    const other = byId(given.otherBranch);
    out.branch = base.branchId;
    out.otherBranch = other && other !== base ? other.branchId : tree.find((b) => b !== base)!.branchId;
    if (validValue(tool, 'afterTurn', given.afterTurn)) out.afterTurn = given.afterTurn;
    return out;
  }
  if (need === 'session') {
    // token_usage's branch: the caller's when it exists, a real one in place of one that does not.
    if (tool.parameters.branch && askedBranch) out.branch = (byId(given.branch) ?? main).branchId;
    return out;
  }
  if (need === 'branch') {
    const branch = byId(given.branch) ?? main;
    if (askedBranch || branch !== main) out.branch = branch.branchId;
    if (given.turn === 0 && (await store.reader.getTurnItems(sessionId, branch.branchId, 0)).length > 0) {
      out.turn = 0;
      if (validValue(tool, 'charOffset', given.charOffset)) out.charOffset = given.charOffset;
    } else if (isInt(given.afterTurn) && given.afterTurn >= 0 && given.turn === undefined) {
      // Turns after afterTurn must exist, unless the branch has none (an answer that says so).
      const maxTurns = isInt(given.maxTurns) ? given.maxTurns : DEFAULT_MAX_TURNS;
      out.afterTurn =
        given.afterTurn < branch.userTurns || branch.userTurns === 0 ? given.afterTurn : Math.max(0, branch.userTurns - maxTurns);
    }
    return out;
  }
  // A turn: on the caller's branch when it has turns, else on main or the first branch that has any.
  const asked = byId(given.branch);
  const branch = asked && asked.userTurns > 0 ? asked : main.userTurns > 0 ? main : tree.find((b) => b.userTurns > 0);
  if (!branch) return null;
  if (askedBranch || branch !== main) out.branch = branch.branchId;
  const turn = isInt(given.turn) && given.turn >= 1 ? Math.min(given.turn, branch.userTurns) : 1;
  out.turn = turn;
  if (turn === given.turn && validValue(tool, 'charOffset', given.charOffset)) out.charOffset = given.charOffset;
  for (const name of ['afterItem', 'afterSpan']) if (validValue(tool, name, given[name])) out[name] = given[name];
  return out;
}

/** Why no example could be found, as the end of the error's message. */
function noneText(tool: string, store: QueryStore, need: Need): string {
  const what =
    need === 'two-branches' ? 'two branches to compare' : need === 'turn' ? 'a turn' : need === 'branch' ? 'any items' : 'any session';
  return need === 'session'
    ? `Store ${JSON.stringify(store.name)} has no sessions, so no call of ${tool} can work there.`
    : `No session of store ${JSON.stringify(store.name)} looked at has ${what}, so no call of ${tool} that works can be shown.`;
}

/**
 * A call of `tool` on `store` that succeeds, as close to the caller's `args` as the store allows; or why there is none.
 * `tool` is the tool as defined, whose `run` gives no example of its own (the check runs it).
 */
export async function exampleCall<H>(
  tool: ExampleTool<H>,
  host: H,
  store: QueryStore,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ call: Record<string, unknown> } | { none: string }> {
  const base: Record<string, unknown> = { store: store.name };
  for (const name of Object.keys(tool.parameters)) {
    if (name !== 'store' && !SESSION_BOUND.has(name) && validValue(tool, name, args[name])) base[name] = args[name];
  }
  if (tool.name === 'search_sessions') {
    if (!validQuery(base.query)) base.query = SAMPLE_QUERY;
    if (typeof args.session === 'string' && args.session !== '' && (await store.hasSession(args.session))) base.session = args.session;
    return { call: base };
  }
  const need = needOf(tool.name, args);
  if (need === null)
    return (await works(tool, host, base, signal))
      ? { call: base }
      : { none: `No call of ${tool.name} that works on store ${JSON.stringify(store.name)} could be found.` };
  const candidates: string[] = [];
  if (typeof args.session === 'string' && args.session !== '' && (await store.hasSession(args.session))) candidates.push(args.session);
  const sessions = await store.listSessions(signal);
  for (const s of sessions) {
    if (candidates.length > SESSIONS_TRIED) break;
    if (s.sessionId !== args.session && showable(s.sessionId) && (need !== 'two-branches' || s.branchCount >= 2))
      candidates.push(s.sessionId);
  }
  for (const sessionId of candidates) {
    checkCancelled(signal);
    // The caller's session-bound arguments belong to the caller's session only.
    const given = sessionId === args.session ? args : {};
    const fitted = await fitSession(tool, store, sessionId, given, need);
    if (!fitted) continue;
    // The caller's call first; else the same session with only what the tool requires.
    for (const call of [
      { ...base, ...fitted },
      { store: store.name, ...(await fitSession(tool, store, sessionId, {}, need)) },
    ]) {
      if (await works(tool, host, call, signal)) return { call };
    }
  }
  return { none: sessions.length === 0 ? noneText(tool.name, store, 'session') : noneText(tool.name, store, need) };
}

function validQuery(query: unknown): boolean {
  if (typeof query !== 'string' || query === '') return false;
  try {
    parseToolQuery(query);
    return true;
  } catch {
    return false;
  }
}

/** Whether the call succeeds: run once, as the caller would run it. */
async function works<H>(tool: ExampleTool<H>, host: H, call: Record<string, unknown>, signal: AbortSignal): Promise<boolean> {
  try {
    await tool.run(host, call, signal);
    return true;
  } catch (err) {
    if (err instanceof QueryError && err.problem === 'cancelled') throw err;
    return false;
  }
}

/** The caller's arguments with an error's fix applied: what the example starts from. */
export function applyFix(args: Record<string, unknown>, fix: CallFix): Record<string, unknown> {
  const out = { ...args };
  for (const name of fix.drop ?? []) delete out[name];
  return { ...out, ...fix.set };
}

/** `error` with its example (or why there is none) at the end. */
export function withExample(error: QueryError, tool: string, found: { call: Record<string, unknown> } | { none: string }): QueryError {
  const tail = 'call' in found ? `Example: ${callText(tool, found.call)}` : found.none;
  return new QueryError(error.problem, `${error.message} ${tail}`);
}
