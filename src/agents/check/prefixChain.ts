/**
 * One branch's prefix for a check's scratch files (scratchStore.ts), copied from the user's file once and grown turn by
 * turn: the cases of a branch come in turn order, and each case's scratch file is a file copy of the chain's template
 * through its turn. Reading a prefix from the user's file and writing it through the store decodes and encodes every
 * item, which for a case on turn 100 was most of the check's own work per case; the chain reads and writes each item
 * of the branch once per check, and each case costs a file copy of its prefix (libuv's threads, not the check's).
 * The template is ours, in the scratch folder, closed (so complete without its `-wal`) whenever it is copied.
 */
import { copyFile, stat } from 'node:fs/promises';
import type { SessionReader } from '../../store/inspector/sessionReader';
import {
  continueBranchPrefix,
  type BranchPrefixCopy,
  type BranchPrefixRequest,
  type PrefixCursor,
} from '../../store/export/branchPrefixCopy';
import type { RunStore } from '../runSession';

/** The store's logs of a template's session: what it would log (usage not stored) concerns a file nobody keeps. */
const SILENT = { error: () => undefined, warn: () => undefined };

/** What the template holds: the branch through a turn of the source, and where to continue the copy from. */
interface Through {
  turn: number;
  contentKey: string;
  copy: BranchPrefixCopy;
  cursor: PrefixCursor;
}

export class PrefixChain {
  private through: Through | null = null;
  /** One copy at a time: a case waits for the turns before its own, which the cases before it are adding. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * `file`: the template's path (in the scratch folder); `emptyFile`: a session file with the tables and no rows;
   * `store`: the sessions the template is written through (the scratch folder's, without syncs).
   */
  constructor(
    private readonly file: string,
    private readonly emptyFile: () => Promise<string>,
    private readonly store: RunStore,
  ) {}

  /**
   * Makes `target` a copy of the branch through `request`'s turn: the template grown to that turn (its new items read
   * from `reader`, the user's file), then copied as a file. Null when the chain cannot serve the turn (a turn before
   * the template's end, or its end's turn with another content key): the caller copies the prefix itself. Throws as
   * `copyBranchPrefix` does; the chain then starts again from nothing for the next case.
   */
  cloneThrough(
    reader: Pick<SessionReader, 'getItemsPage'>,
    request: BranchPrefixRequest,
    target: string,
    signal?: AbortSignal,
  ): Promise<BranchPrefixCopy | null> {
    const done = this.queue.then(() => this.serve(reader, request, target, signal));
    this.queue = done.catch(() => undefined);
    return done;
  }

  private async serve(
    reader: Pick<SessionReader, 'getItemsPage'>,
    request: BranchPrefixRequest,
    target: string,
    signal?: AbortSignal,
  ): Promise<BranchPrefixCopy | null> {
    const through = this.through;
    let current: Through;
    if (through !== null && (request.turn < through.turn || (request.turn === through.turn && request.contentKey !== through.contentKey)))
      return null;
    if (through !== null && request.turn === through.turn) current = through;
    else {
      this.through = null;
      if (through === null) await copyFile(await this.emptyFile(), this.file);
      const session = await this.store.openSession({ sessionId: request.sessionId, dbPath: this.file, logger: SILENT });
      let grown;
      try {
        grown = await continueBranchPrefix(reader, session, request, through?.cursor ?? null, signal);
      } finally {
        await session.close();
      }
      // Closed by its last connection, the template is whole in its main file; a `-wal` left behind (a connection
      // elsewhere) would mean the file alone is not the copy, so the chain serves no case then.
      if (await hasWal(this.file)) return null;
      current = {
        turn: request.turn,
        contentKey: request.contentKey,
        copy: { turn: grown.turn, items: grown.items },
        cursor: grown.cursor,
      };
      this.through = current;
    }
    await copyFile(this.file, target);
    return { ...current.copy };
  }
}

async function hasWal(file: string): Promise<boolean> {
  try {
    return (await stat(`${file}-wal`)).size > 0;
  } catch {
    return false;
  }
}
