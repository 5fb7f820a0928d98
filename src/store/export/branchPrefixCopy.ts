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
  let after: number | null = null;
  let userMessages = 0;
  let turn: number | null = null;
  let items = 0;
  let structured: boolean | undefined;
  let limit = FIRST_PAGE;
  for (let done = false; !done; limit = Math.min(PREFIX_PAGE, limit * 2)) {
    signal?.throwIfAborted();
    const page = await reader.getItemsPage(request.sessionId, request.branchId, { afterSequence: after, limit });
    const batch: unknown[] = [];
    for (const e of page.items) {
      structured ??= e.structureId !== null;
      // An item that cannot be decoded is one the SDKs' sessions skip (as Python does): the agent never sees it.
      if (e.corrupt) continue;
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
      batch.push(e.item);
    }
    if (batch.length > 0) await target.addItems(batch as AgentInputItem[]);
    items += batch.length;
    if (page.nextAfterSequence === null) done = true;
    else after = page.nextAfterSequence;
  }
  if (turn === null) throw new TurnChangedError(`turn ${request.turn} is gone`);
  return { turn, items };
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
