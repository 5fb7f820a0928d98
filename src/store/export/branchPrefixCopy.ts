/**
 * A branch through one of its turns, copied into another session file (a check's scratch file, docs/check.md,
 * "Scratch storage"): the items the agent is given as history and the turn itself, read a page at a time from the
 * source and written through `AdvancedSQLiteSession`, so the copy is in the format Python writes. What a copy costs is
 * the branch's prefix, never the source file. The same function runs in the caller's thread (the CLI) and in the store
 * worker (the extension: `StoreClient.copyBranchPrefix`), where neither the reads nor the writes touch the host's thread.
 */
import type { AgentInputItem } from '@openai/agents';
import type { SessionReader } from '../inspector/sessionReader';
import { openSessionDatabase } from '../inspector/sessionDatabase';
import { turnKeyOf } from '../reviews/reviewMatching';
import { AdvancedSQLiteSession } from '../session/advancedSqliteSession';

/**
 * Items read at a time at most: memory stays a page per running copy. Pages start small and double up to this, so a
 * copy of an early turn reads little past it (a page of 500 items of a long conversation is megabytes to decode, most
 * of it after the turn).
 */
export const PREFIX_PAGE = 500;
const FIRST_PAGE = 32;

/** Which turn to copy through, and the content key its user message must still have. */
export interface BranchPrefixRequest {
  sessionId: string;
  branchId: string;
  turn: number;
  contentKey: string;
}

export interface BranchPrefixCopy {
  /** The turn as the copy numbers it (the count of user messages up to it, as the SDKs number turns). */
  turn: number;
  /** Items copied (the prefix and the turn). */
  items: number;
}

/**
 * Where a copy stopped, to continue the same copy later through a later turn of the same branch (a check's prefix
 * chain, src/agents/check/scratchStore.ts): the copy so far is then read again from nowhere.
 */
export interface PrefixCursor {
  /** The paging cursor of the last item read into the copy (null: none). */
  after: number | null;
  /** User messages copied. */
  userMessages: number;
  /** Items copied. */
  items: number;
  /** The source's turn the copy was made through. */
  throughTurn: number;
  /** Whether the source branch has structure rows (known once an item was read). */
  structured: boolean | undefined;
}

/** The turn is no longer what the request was made from: the source changed after it was read. */
export class TurnChangedError extends Error {
  override readonly name = 'TurnChangedError';
}

const isUser = (item: unknown): boolean => (item as { role?: unknown } | null)?.role === 'user';

/**
 * Copies `request`'s branch from `reader`, up to and including its turn, into `target` (a session on the copy's
 * `main`). Throws `TurnChangedError` when the turn is gone or holds another user message than `contentKey` says.
 */
export async function copyBranchPrefix(
  reader: Pick<SessionReader, 'getItemsPage'>,
  target: { addItems(items: AgentInputItem[]): Promise<void> },
  request: BranchPrefixRequest,
  signal?: AbortSignal,
): Promise<BranchPrefixCopy> {
  const { turn, items } = await continueBranchPrefix(reader, target, request, null, signal);
  return { turn, items };
}

/**
 * `copyBranchPrefix` continued from `from` (null: from the start) into a target that holds what `from` says was
 * copied: only the items after it are read and written. `request.turn` must not be before the turn `from` was made
 * through. Resolves with the copy and the cursor to continue it from; throws as `copyBranchPrefix` does, after which
 * the target holds part of the turns between (the caller throws it away).
 */
export async function continueBranchPrefix(
  reader: Pick<SessionReader, 'getItemsPage'>,
  target: { addItems(items: AgentInputItem[]): Promise<void> },
  request: BranchPrefixRequest,
  from: PrefixCursor | null,
  signal?: AbortSignal,
): Promise<BranchPrefixCopy & { cursor: PrefixCursor }> {
  let after: number | null = from?.after ?? null;
  let userMessages = from?.userMessages ?? 0;
  let turn: number | null = null;
  let items = from?.items ?? 0;
  let structured: boolean | undefined = from?.structured;
  // The last item read into the copy: a page may read past the turn, and a continuation starts after the copy's end.
  let copiedThrough = after;
  // A continuation's first page: about the turns still to copy, at the branch's items per turn so far (and one item
  // more, which shows where the turn ends), rather than FIRST_PAGE items decoded to keep a few.
  let limit =
    from !== null && from.userMessages > 0
      ? Math.min(PREFIX_PAGE, Math.ceil((from.items / from.userMessages) * Math.max(1, request.turn - from.throughTurn)) + 1)
      : FIRST_PAGE;
  for (let done = false; !done; limit = Math.min(PREFIX_PAGE, limit * 2)) {
    signal?.throwIfAborted();
    const page = await reader.getItemsPage(request.sessionId, request.branchId, { afterSequence: after, limit });
    const batch: unknown[] = [];
    for (const e of page.items) {
      structured ??= e.structureId !== null;
      // An item that cannot be decoded is one the SDKs' sessions skip (as Python does): the agent never sees it.
      if (e.corrupt) {
        if (structured && e.userTurnNumber !== null && e.userTurnNumber > request.turn) {
          done = true;
          break;
        }
        copiedThrough = e.sequenceNumber;
        continue;
      }
      const user = isUser(e.item);
      // A plain session records no turn numbers: its turns are counted from its user messages, as the turn list does.
      const at = structured ? e.userTurnNumber : user ? userMessages + 1 : userMessages;
      if (at !== null && at > request.turn) {
        done = true;
        break;
      }
      if (user) {
        userMessages++;
        if (at === request.turn && turn === null) {
          if (turnKeyOf(e.item) !== request.contentKey) throw new TurnChangedError(`turn ${request.turn} holds another user message now`);
          turn = userMessages;
        }
      }
      copiedThrough = e.sequenceNumber;
      batch.push(e.item);
    }
    if (batch.length > 0) await target.addItems(batch as AgentInputItem[]);
    items += batch.length;
    if (page.nextAfterSequence === null) done = true;
    else after = page.nextAfterSequence;
  }
  if (turn === null) throw new TurnChangedError(`turn ${request.turn} is gone`);
  return { turn, items, cursor: { after: copiedThrough, userMessages, items, throughTurn: request.turn, structured } };
}

/**
 * `copyBranchPrefix` from the session file `sourcePath` (opened read-only here) into the existing session file
 * `targetPath` (a copy of an empty one: tables, no rows), on connections of its own. The target is thrown away after
 * use, so it is written without syncs.
 */
export async function copyBranchPrefixToFile(
  sourcePath: string,
  targetPath: string,
  request: BranchPrefixRequest,
  signal?: AbortSignal,
): Promise<BranchPrefixCopy> {
  const source = openSessionDatabase(sourcePath, { readonly: true });
  try {
    const target = new AdvancedSQLiteSession({ sessionId: request.sessionId, dbPath: targetPath, synchronous: 'OFF' });
    try {
      return await copyBranchPrefix(source, target, request, signal);
    } finally {
      target.close();
    }
  } finally {
    source.close();
  }
}
