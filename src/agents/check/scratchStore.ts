/**
 * Scratch storage for a check's runs (docs/check.md, "Scratch storage"): the user's session file is never written by a
 * check. Each case runs in a session file of its own in a temporary folder, holding only what its run reads — the
 * case's branch up to and including the recorded turn (the history the agent is given, and the turn whose recorded tool
 * calls replay reads when it forks) — written through our `AdvancedSQLiteSession`, so the file is in the format Python
 * writes and an agent command's own SDK session reads it as it would the user's. The run then forks that turn in the
 * scratch file as any what-if does. What a case costs is its branch's prefix, never the file: a case on turn 3 of a
 * 1 GB file copies three turns.
 */
import { mkdtempSync } from 'node:fs';
import { copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionReader } from '../../store/inspector/sessionReader';
import { copyBranchPrefix, PREFIX_PAGE, TurnChangedError } from '../../store/export/branchPrefixCopy';
import { IN_THREAD_STORE, type RunStore } from '../runSession';
import type { CheckCase } from './checkTypes';

export { TurnChangedError };
export const SCRATCH_PAGE = PREFIX_PAGE;

/** Where a case runs: a scratch session file whose `main` branch is the case's branch through its turn. */
export interface ScratchCase {
  dbPath: string;
  branchId: string;
  /** The case's turn as the scratch file numbers it (the count of user messages up to it, as the SDKs number turns). */
  turn: number;
  /** Items copied (the prefix and the turn). */
  items: number;
}

type Reader = Pick<SessionReader, 'getItemsPage'>;

/** The store's logs of a scratch session: what it would log (usage not stored) concerns files nobody keeps. */
const SILENT = { error: () => undefined, warn: () => undefined };

/**
 * A temporary folder for one check's scratch files, removed whole when the check ends. Every SQLite connection it
 * opens goes through `store` (the CLI's thread, or the extension's store worker, so that none of the copying runs on
 * the extension host's thread), and the files are copied and removed with the asynchronous file calls (libuv's
 * threads), so a check's own thread only passes items along.
 */
export class ScratchFolder {
  /** An empty session file (the tables, no rows), made once and copied for each case. */
  private template: Promise<string> | undefined;
  /** `store` opening every session without a sync: see `runStore`. */
  readonly runStore: RunStore;

  private constructor(
    readonly path: string,
    private readonly store: RunStore,
  ) {
    // A scratch file is thrown away when its case ends, so it need not survive a power cut: without syncs its writes,
    // the fork's commit and the checkpoint when the last connection closes cost no fsync (measured: those syncs were
    // about 30 ms of blocked thread per case, which queue behind each other when 8 cases run at once).
    this.runStore = { ...store, openSession: (options) => store.openSession({ ...options, synchronous: 'OFF' }) };
  }

  /**
   * A new folder under `parent` (default the system's temporary folder), readable by this user only (mkdtemp: 0700);
   * its sessions open through `store` (default: this thread).
   */
  static create(parent = tmpdir(), store: RunStore = IN_THREAD_STORE): ScratchFolder {
    return new ScratchFolder(mkdtempSync(join(parent, 'agent-sessions-check-')), store);
  }

  /**
   * Copies the case's branch from the user's file, up to and including the case's turn, into a new scratch file named
   * by `slot`: in the store's own thread when it can copy (`RunStore.copyBranchPrefix`: the extension's store worker,
   * reading `file` on a connection of its own), else here, reading through `reader` (the user's file, read-only).
   * Throws `TurnChangedError` when the turn is gone or holds another user message than the case was made from.
   */
  async prepare(reader: Reader, c: CheckCase, slot: number, signal?: AbortSignal, file?: string): Promise<ScratchCase> {
    const dbPath = join(this.path, `case-${slot}.db`);
    // A copy of the empty template, not a new file: creating the tables costs SQLite's syncs (20-50 ms here), a copy
    // of 80 KB well under 1 ms — the difference is most of a case's own overhead.
    await copyFile(await this.emptyFile(), dbPath);
    const request = { sessionId: c.sessionId, branchId: c.branchId, turn: c.turn, contentKey: c.contentKey };
    if (file !== undefined && this.store.copyBranchPrefix) {
      const copied = await this.store.copyBranchPrefix(file, dbPath, request, signal);
      return { dbPath, branchId: 'main', ...copied };
    }
    const session = await this.runStore.openSession({ sessionId: c.sessionId, dbPath, logger: SILENT });
    try {
      const copied = await copyBranchPrefix(reader, session, request, signal);
      return { dbPath, branchId: 'main', ...copied };
    } finally {
      await session.close();
    }
  }

  private emptyFile(): Promise<string> {
    this.template ??= (async () => {
      const path = join(this.path, 'empty.db');
      const session = await this.runStore.openSession({ sessionId: 'template', dbPath: path, createTables: true, logger: SILENT });
      await session.close();
      return path;
    })();
    return this.template;
  }

  /** Removes one case's scratch file (and its -wal, -shm) once its run is over. */
  async discard(scratch: Pick<ScratchCase, 'dbPath'>): Promise<void> {
    await Promise.all(['', '-wal', '-shm', '-journal'].map((suffix) => rm(`${scratch.dbPath}${suffix}`, { force: true })));
  }

  /** Removes the folder and whatever is left in it. */
  async dispose(): Promise<void> {
    await rm(this.path, { recursive: true, force: true });
  }
}
