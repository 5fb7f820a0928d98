/**
 * One branch's prefix for a check's scratch files (scratchStore.ts), copied from the user's file once and grown turn by
 * turn: the cases of a branch come in turn order, and each case's scratch file is a file copy of the chain's template
 * through its turn. Reading a prefix from the user's file and writing it through the store decodes and encodes every
 * item, which for a case on turn 100 was most of the check's own work per case; the chain reads and writes each item
 * of the branch once per check, and each case costs a file copy of its prefix (libuv's threads, not the check's).
 * The template is ours, in the scratch folder. Its session stays open from case to case (an open and a close per case
 * were a tenth of a case's work on the check's thread, issue 42); before each copy its `-wal` is checkpointed into the
 * file and emptied, so the file alone is the template.
 */
import { copyFile } from 'node:fs/promises';
import type { SessionReader } from '../../store/inspector/sessionReader';
import {
  continueBranchPrefix,
  type BranchPrefixCopy,
  type BranchPrefixRequest,
  type PrefixCursor,
} from '../../store/export/branchPrefixCopy';
import type { RunSession, RunStore } from '../runSession';
import { openDatabase } from '../../store/drivers/openDatabase';
import type { SqliteDatabase } from '../../store/sqlite/sqliteDatabase';

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
  /** The template's session, open while the chain grows; and a connection of ours that checkpoints it. */
  private open: { session: RunSession; checkpoints: SqliteDatabase } | undefined;
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

  /** Closes the template's connections (the scratch folder's `dispose`; a chain that starts again). */
  async close(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    if (!open) return;
    try {
      await open.session.close();
    } finally {
      open.checkpoints.close();
    }
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
      if (through === null) {
        await this.close();
        await copyFile(await this.emptyFile(), this.file);
      }
      const open = (this.open ??= {
        session: await this.store.openSession({ sessionId: request.sessionId, dbPath: this.file, logger: SILENT }),
        checkpoints: withoutSyncs(openDatabase(this.file, { fileMustExist: true })),
      });
      let grown;
      try {
        grown = await continueBranchPrefix(reader, open.session, request, through?.cursor ?? null, signal);
      } catch (err) {
        // The chain starts again from nothing: a new template, a new session.
        await this.close();
        throw err;
      }
      // The file alone is the template once the `-wal` is in it: a checkpoint that could not take every frame (a
      // reader elsewhere) leaves the chain serving no case, each then copied from the user's file.
      if (!walCheckpointed(open.checkpoints)) {
        await this.close();
        return null;
      }
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

/** A throwaway file's connection: its checkpoints need survive no power cut, so they cost no fsync. */
function withoutSyncs(db: SqliteDatabase): SqliteDatabase {
  db.exec('PRAGMA synchronous = OFF');
  return db;
}

/** Checkpoints the whole `-wal` into the file and empties it; false when SQLite could not (busy). */
function walCheckpointed(db: SqliteDatabase): boolean {
  const row = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get<{ busy: number; log: number; checkpointed: number }>();
  return row !== undefined && row.busy === 0 && row.log === row.checkpointed;
}
