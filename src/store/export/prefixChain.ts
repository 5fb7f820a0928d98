/**
 * One branch's prefix for a check's scratch files (docs/check.md, "Scratch storage"), copied from the user's file once
 * and grown turn by turn: the cases of a branch come in turn order, and each case's scratch file is a file copy of the
 * chain's template through its turn. Reading a prefix from the user's file and writing it through the store decodes and
 * encodes every item, which for a case on turn 100 was most of the check's own work per case; the chain reads and
 * writes each item of the branch once per check, and each case costs a file copy of its prefix (libuv's threads).
 * The template is ours, in the scratch folder. Its session stays open from case to case (an open and a close per case
 * were a tenth of a case's work on the check's thread, issue 42); before each copy its `-wal` is checkpointed into the
 * file and emptied, so the file alone is the template. The CLI's check keeps its chains in its own thread
 * (src/agents/check/scratchStore.ts); the extension's, in the store worker (`copyBranchPrefixChained` below).
 */
import { copyFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import type { SessionReader } from '../inspector/sessionReader';
import { openSessionDatabase, type SessionDatabase } from '../inspector/sessionDatabase';
import { AdvancedSQLiteSession } from '../session/advancedSqliteSession';
import { continueBranchPrefix, type BranchPrefixCopy, type BranchPrefixRequest, type PrefixCursor } from './branchPrefixCopy';
import { openDatabase } from '../drivers/openDatabase';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';

/** What the chain writes the template through: a session of the template's file. */
export interface PrefixTarget {
  addItems(items: AgentInputItem[]): Promise<void>;
  close(): void | Promise<void>;
}

/** Opens the template's session (the session `sessionId` of the file `dbPath`, which exists). */
export type OpenPrefixTarget = (sessionId: string, dbPath: string) => Promise<PrefixTarget>;

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
  private open: { session: PrefixTarget; checkpoints: SqliteDatabase } | undefined;
  /** One copy at a time: a case waits for the turns before its own, which the cases before it are adding. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * `file`: the template's path (in the scratch folder); `emptyFile`: a session file with the tables and no rows;
   * `openTarget`: the template's session (the scratch folder's, without syncs).
   */
  constructor(
    readonly file: string,
    private readonly emptyFile: () => Promise<string>,
    private readonly openTarget: OpenPrefixTarget,
  ) {}

  /**
   * Makes `target` a copy of the branch through `request`'s turn: the template grown to that turn (its new items read
   * from `reader`, the user's file), then copied as a file. Null when the chain cannot serve the turn (a turn before
   * the template's end, or its end's turn with another content key): the caller copies the prefix itself. Throws as
   * `copyBranchPrefix` does; the chain then starts again from nothing for the next case. `added`: the items this call
   * read into the template (none when it held the turn already).
   */
  cloneThrough(
    reader: Pick<SessionReader, 'getItemsPage'>,
    request: BranchPrefixRequest,
    target: string,
    signal?: AbortSignal,
  ): Promise<(BranchPrefixCopy & { added: number }) | null> {
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
  ): Promise<(BranchPrefixCopy & { added: number }) | null> {
    const through = this.through;
    let current: Through;
    let added = 0;
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
        session: await this.openTarget(request.sessionId, this.file),
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
      added = grown.items - (through?.cursor.items ?? 0);
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
    return { ...current.copy, added };
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

/** The template's logs: what it would log (usage not stored) concerns a file nobody keeps. */
const SILENT = { error: () => undefined, warn: () => undefined };

/** A scratch file's session in this thread (a template, a case's target), without syncs: thrown away with its check. */
const openScratchSession: OpenPrefixTarget = async (sessionId, dbPath) =>
  new AdvancedSQLiteSession({ sessionId, dbPath, synchronous: 'OFF', logger: SILENT });

/**
 * The chains of the store worker (the extension's check), by template path, each with the user's file it grows from
 * open read-only until `releasePrefixChains` (the check's scratch folder removed).
 */
const chains = new Map<string, { chain: PrefixChain; source: SessionDatabase; sourcePath: string }>();

/** A branch's chain in the store worker: its template's path, and the empty session file it starts from. */
export interface PrefixChainFiles {
  file: string;
  emptyFile: string;
}

/**
 * Makes `targetPath` (not there yet) a copy of the branch through `request`'s turn, as `copyBranchPrefixToFile` does,
 * through the chain whose template is `chain.file` (started on first use from `chain.emptyFile`, a session file with
 * the tables and no rows): the template grows by the turns since its last case, read from `sourcePath`, and the target
 * is a file copy of it. A turn the chain cannot serve (before the template's end, or its end's turn changed) is
 * copied from the branch's start into a copy of the empty file, as without a chain. `copied`: the items this call
 * read from the source (into the template, or into the target when copied from the start).
 */
export async function copyBranchPrefixChained(
  sourcePath: string,
  targetPath: string,
  request: BranchPrefixRequest,
  chain: PrefixChainFiles,
  signal?: AbortSignal,
): Promise<BranchPrefixCopy & { copied: number }> {
  const key = resolve(chain.file);
  let entry = chains.get(key);
  // A chain grows from one file: asked for another at the same template, it starts again.
  if (entry && entry.sourcePath !== resolve(sourcePath)) {
    chains.delete(key);
    await closeEntry(entry);
    entry = undefined;
  }
  if (!entry) {
    const source = openSessionDatabase(sourcePath, { readonly: true });
    entry = {
      chain: new PrefixChain(chain.file, async () => chain.emptyFile, openScratchSession),
      source,
      sourcePath: resolve(sourcePath),
    };
    chains.set(key, entry);
  }
  const cloned = await entry.chain.cloneThrough(entry.source, request, targetPath, signal);
  if (cloned !== null) return { turn: cloned.turn, items: cloned.items, copied: cloned.added };
  await copyFile(chain.emptyFile, targetPath);
  const target = await openScratchSession(request.sessionId, targetPath);
  try {
    const { turn, items } = await continueBranchPrefix(entry.source, target, request, null, signal);
    return { turn, items, copied: items };
  } finally {
    await target.close();
  }
}

/** Closes the chains whose templates are in `folder` (a check's scratch folder, about to be removed). */
export async function releasePrefixChains(folder: string): Promise<void> {
  const under = resolve(folder) + sep;
  for (const [key, entry] of [...chains]) {
    if (!key.startsWith(under)) continue;
    chains.delete(key);
    await closeEntry(entry);
  }
}

async function closeEntry(entry: { chain: PrefixChain; source: SessionDatabase }): Promise<void> {
  try {
    await entry.chain.close();
  } finally {
    entry.source.close();
  }
}
