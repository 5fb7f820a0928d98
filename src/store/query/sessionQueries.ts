/** The session list of a store and a session's branch tree, as text for a model. */
import type { BranchNode } from '../inspector/inspectorTypes';
import { answer, callText, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, optionalString, ownTurns, pickBranch, requireSession, stringArgument } from './queryArguments';
import { checkCancelled } from './queryErrors';
import { DEFAULT_MAX_SESSIONS, MAX_MAX_SESSIONS } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

export interface ListSessionsArgs {
  /** Only sessions whose id contains this text (case-insensitive). */
  contains?: string;
  /** Sessions to skip (the `next` of a cut answer). */
  offset?: number;
  maxSessions?: number;
}

/**
 * The store's sessions with their items, turns (files; a server store records none and is not read through to count
 * them), branches, tokens and last update, as `agent-sessions ls` shows them.
 */
export async function listSessions(store: QueryStore, args: ListSessionsArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const contains = optionalString('contains', args.contains)?.toLowerCase();
  const offset = intArgument('offset', args.offset, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const max = intArgument('maxSessions', args.maxSessions, { min: 1, max: MAX_MAX_SESSIONS, fallback: DEFAULT_MAX_SESSIONS });
  const all = await store.listSessions(signal);
  const matching = contains === undefined ? all : all.filter((s) => s.sessionId.toLowerCase().includes(contains));
  const page = matching.slice(offset, offset + max);
  const lines: string[] = [];
  for (const s of page) {
    checkCancelled(signal);
    let turns = '';
    if (store.kind === 'file') {
      const tree = await store.reader.getBranchTree(s.sessionId);
      turns = `, ${counted(
        tree.reduce((sum, b) => sum + ownTurns(b), 0),
        'turn',
      )}`;
    }
    const tokens = s.usage ? `, ${counted(s.usage.totalTokens, 'token')}` : '';
    lines.push(
      `- ${JSON.stringify(s.sessionId)}: ${counted(s.messageCount, 'item')}${turns}, ${counted(s.branchCount, 'branch', 'branches')}${tokens}, updated ${s.updatedAt ?? 'unknown'}`,
    );
  }
  const filter = contains === undefined ? '' : ` whose id contains ${JSON.stringify(args.contains)}`;
  // An offset past the last session shows none: said so, rather than a range that ends before it starts.
  const head =
    matching.length === 0
      ? `No sessions${filter} (${all.length} in the store).`
      : page.length === 0
        ? `${counted(matching.length, 'session')}${filter}; none after offset ${offset} (the last is at offset ${matching.length - 1}).`
        : `${counted(matching.length, 'session')}${filter}; ${page.length === matching.length ? 'all shown' : `${offset + 1}–${offset + page.length} shown`}:`;
  const end = offset + page.length;
  const more = end < matching.length;
  const next = more ? { offset: end } : null;
  const hint =
    page.length > 0
      ? `Read one with ${callText('read_turns', { store: store.name, session: page[0]!.sessionId })}, or its branches with branch_tree.`
      : '';
  return answer(
    sourceOf(store),
    [head, ...lines].join('\n'),
    next,
    [more ? `… truncated: ${counted(matching.length - end, 'more session')} — call list_sessions again with offset=${end}.` : '', hint]
      .filter(Boolean)
      .join('\n'),
  );
}

export interface BranchTreeArgs {
  session: string;
}

/** A session's branches as a tree: each with its turns and items, and the branch and turn it was forked from. */
export async function branchTree(store: QueryStore, args: BranchTreeArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const sessionId = stringArgument('session', args.session);
  checkCancelled(signal);
  const tree = await requireSession(store, sessionId);
  const children = new Map<string | null, BranchNode[]>();
  const ids = new Set(tree.map((b) => b.branchId));
  // A parent that is not in the list (never, from the store's own tree) would hide its children: they become roots.
  for (const b of tree) {
    const parent = b.parentBranchId !== null && ids.has(b.parentBranchId) ? b.parentBranchId : null;
    children.set(parent, [...(children.get(parent) ?? []), b]);
  }
  const lines: string[] = [];
  const walk = (parent: string | null, depth: number): void => {
    for (const b of children.get(parent) ?? []) {
      const turns = b.userTurnsAtLeast ? `${b.userTurns}+ turns` : counted(b.userTurns, 'turn');
      const fork =
        b.parentBranchId === null
          ? ''
          : `, forked from ${JSON.stringify(b.parentBranchId)}${b.forkTurn !== null ? ` at turn ${b.forkTurn} (turns 1–${b.forkTurn - 1} shared, ${ownTurns(b)} its own)` : ''}`;
      lines.push(
        `${'  '.repeat(depth)}- ${JSON.stringify(b.branchId)}: ${turns}, ${counted(b.messageCount, 'item')}${fork}, created ${b.createdAt ?? 'unknown'}`,
      );
      walk(b.branchId, depth + 1);
    }
  };
  walk(null, 0);
  const body =
    tree.length === 0
      ? `Session ${JSON.stringify(sessionId)} has no items yet.`
      : `${counted(tree.length, 'branch', 'branches')}:\n${lines.join('\n')}`;
  // pickBranch refuses a session without branches: asked only when there is one.
  const hint =
    tree.length === 0
      ? ''
      : `Read a branch with ${callText('read_turns', { store: store.name, session: sessionId, branch: pickBranch(store, sessionId, tree, undefined).branchId })}.`;
  return answer(sourceOf(store, sessionId), body, null, hint);
}
