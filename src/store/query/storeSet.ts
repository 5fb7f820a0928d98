/**
 * The stores a query server answers about: the ones it was started with (opened on first use, kept open so the
 * inspector's kept totals make later answers fast), and files a call names by path (opened then and kept too, but
 * only once they opened: a path that is not a session file is never listed, so it cannot make a later call without
 * `store` ambiguous). Each has a short name, which the `store` argument and resource URIs use; the `store` argument
 * also takes the path or address itself.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { redactUrl } from '../remote/remoteErrors';
import { remoteKindOf } from '../remote/remoteStore';
import { dataValue } from './dataBlock';
import { QueryError, someOf } from './queryErrors';
import type { QueryStore } from './queryStore';

/** A store opened for the set, and how to close it. */
export interface OpenedStore {
  store: QueryStore;
  close(): void | Promise<void>;
  /**
   * For a file: whether the path still names the file the connection reads (`SessionDatabase.fileState`). A
   * connection keeps reading a file that was replaced or deleted, so its answers would be about a file that is gone.
   */
  fileState?(): 'ok' | 'deleted' | 'replaced';
}

/** Opens `target` (a file path, made absolute, or a server address) as the store called `name`. */
export type StoreOpener = (target: string, name: string) => Promise<OpenedStore>;

interface Entry {
  name: string;
  target: string;
  /** For a file: what names it whatever the path's spelling (fileKey); undefined for a server store. */
  key?: string;
  location: string;
  kind: 'file' | 'server';
  opened?: Promise<OpenedStore>;
}

/** What the user does to let a --only-stores server (the one VS Code starts) read a file. */
const OPEN_IN_VS_CODE =
  "Ask the user to open the session file in VS Code's Sessions view first (Agent Sessions: Open Session Database…): the server VS Code starts then serves it too.";

const isAddress = (target: string): boolean => remoteKindOf(target) !== undefined;

/**
 * What names a file whatever path reaches it: its device and inode (a hard link, a symbolic link, `./a.db` and
 * `/abs/a.db` all give the same), else its real path, else the path itself. One file is served once: two entries for
 * one file would list it twice under two names, repeat its resources and make every call without `store` ambiguous.
 */
function fileKey(path: string): string {
  try {
    const st = statSync(path);
    // Windows may give no inode number (0): the real path is the identity then.
    if (st.ino !== 0) return `inode:${st.dev}:${st.ino}`;
  } catch {
    // Not there (yet): the path is all there is.
  }
  try {
    return `path:${realpathSync.native(path)}`;
  } catch {
    return `path:${path}`;
  }
}

export class StoreSet {
  private readonly entries: Entry[] = [];
  /** Files calls named, while their first open runs: listed only when it succeeds. */
  private readonly pending = new Map<string, Promise<Entry>>();
  /** The names those files will have, so that two of them never get the same one. */
  private readonly pendingNames = new Set<string>();

  /**
   * @param targets the stores served (file paths or server addresses)
   * @param allowOtherFiles whether a call may name a session file that is not among them
   */
  constructor(
    private readonly opener: StoreOpener,
    targets: readonly string[],
    private readonly allowOtherFiles = true,
  ) {
    // A store given twice (the same path, another spelling of it, a link to the file) is served once.
    for (const t of targets) {
      const entry = this.entryFor(t);
      if (!this.entries.includes(entry)) this.entries.push(entry);
    }
  }

  /** Called when a file joins the set (a call named it and it opened): the server tells its client the list changed. */
  onChange: (() => void) | undefined;

  /** Whether a call may name a session file the set was not started with (list_stores says so, or not). */
  get takesOtherFiles(): boolean {
    return this.allowOtherFiles;
  }

  /** The stores known so far: served ones and files calls have named. */
  list(): { name: string; location: string; kind: 'file' | 'server' }[] {
    return this.entries.map(({ name, location, kind }) => ({ name, location, kind }));
  }

  /** The entry `target` is or would be: the known one, else a new one with a name no entry (or pending open) has. */
  private entryFor(target: string, taken: readonly string[] = []): Entry {
    const kind = isAddress(target) ? 'server' : 'file';
    const abs = kind === 'file' ? resolve(target) : target;
    const key = kind === 'file' ? fileKey(abs) : undefined;
    const known = this.entries.find((e) => e.target === abs || (key !== undefined && e.key === key));
    if (known) return known;
    const base = kind === 'file' ? basename(abs, extname(abs)) : nameOfAddress(target);
    const clean = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'store';
    let name = clean;
    for (let i = 2; this.entries.some((e) => e.name === name) || taken.includes(name); i++) name = `${clean}-${i}`;
    return { name, target: abs, ...(key !== undefined ? { key } : {}), location: kind === 'file' ? abs : redactUrl(target), kind };
  }

  /**
   * A file a call named, opened before it joins the set: one that does not open (not SQLite, no session tables, no
   * permission) is reported and forgotten, so the served set stays what it was started with plus files that opened.
   * Two calls naming the same new file share its one open.
   */
  private async addOpened(path: string): Promise<Entry> {
    // By the file, not the path: two spellings of one new file share its one open too.
    const key = fileKey(path);
    let adding = this.pending.get(key);
    if (!adding) {
      const entry = this.entryFor(path, [...this.pendingNames]);
      this.pendingNames.add(entry.name);
      adding = this.open(entry)
        .then(() => {
          this.entries.push(entry);
          this.onChange?.();
          return entry;
        })
        .finally(() => {
          this.pending.delete(key);
          this.pendingNames.delete(entry.name);
        });
      this.pending.set(key, adding);
    }
    return adding;
  }

  /**
   * The store a call names: by name, path or address; none named is the only store served. Throws `unknown-store`
   * (naming the stores there are) otherwise.
   */
  async resolve(arg: unknown, tool: string): Promise<QueryStore> {
    const found = this.find(arg, tool);
    return this.open(typeof found === 'string' ? await this.addOpened(found) : found);
  }

  /** The store called `name` (resource URIs), or undefined. */
  async byName(name: string): Promise<QueryStore | undefined> {
    const entry = this.entries.find((e) => e.name === name);
    return entry ? this.open(entry) : undefined;
  }

  /** The entry a call names, or the absolute path of a file not in the set yet (opened before it is added). */
  private find(arg: unknown, tool: string): Entry | string {
    const names = this.entries.map((e) => e.name);
    // The example of an error here is the caller's call on the first store served (queryExamples.ts completes it);
    // with none served there is no call that works to show, only what to pass.
    const onFirst = names[0] !== undefined ? { set: { store: names[0] } } : undefined;
    if (arg === undefined || arg === null || arg === '') {
      if (this.entries.length === 1) return this.entries[0]!;
      throw new QueryError(
        'unknown-store',
        this.entries.length === 0
          ? this.allowOtherFiles
            ? `No store is being served: pass store, the absolute path of a session file (SQLite), to ${tool}.`
            : `No store is being served: this server reads only the stores it was started with (--only-stores), and it was started with none. ${OPEN_IN_VS_CODE}`
          : `Several stores are served (${someOf(names, 10)}): pass store, one of those names.`,
        onFirst,
      );
    }
    if (typeof arg !== 'string')
      throw new QueryError(
        'bad-argument',
        `store must be a string (a store name, a file path or an address), got ${JSON.stringify(arg)}.`,
        onFirst,
      );
    const byName = this.entries.find((e) => e.name === arg || e.target === arg || e.location === arg);
    if (byName) return byName;
    if (isAddress(arg)) {
      throw new QueryError(
        'unknown-store',
        `The server store ${dataValue(redactUrl(arg))} is not served here: only the stores the server was started with (--store) are read from servers. Served: ${someOf(names, 10)}.`,
      );
    }
    const path = resolve(arg);
    const key = fileKey(path);
    const known = this.entries.find((e) => e.target === path || e.key === key);
    if (known) return known;
    if (!this.allowOtherFiles) {
      // The server VS Code starts runs with --only-stores: opening the file in VS Code is the user's consent to
      // reading it (the Language Model tools ask the same before reading a file that is not open).
      throw new QueryError(
        'unknown-store',
        `No store ${dataValue(arg)}: this server reads only the stores it was started with (--only-stores), and that is not one of them. ${OPEN_IN_VS_CODE} Stores: ${someOf(names, 10)}.`,
      );
    }
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new QueryError(
        'unknown-store',
        `No store ${dataValue(arg)}: it is not a served store's name and no file exists at ${dataValue(path)}. Stores: ${someOf(names, 10)}.`,
        onFirst,
      );
    }
    return path;
  }

  /**
   * The store `entry` names, opened. Its errors go to the model outside any data block, so the path (a file's name is
   * anyone's: workspace discovery opens what a repository ships) and the opener's message (which may repeat it) are
   * data values, quoted on one line (dataBlock.ts).
   */
  private async open(entry: Entry): Promise<QueryStore> {
    const opened = (entry.opened ??= this.opener(entry.target, entry.name));
    let current: OpenedStore;
    try {
      current = await opened;
    } catch (err) {
      // Not kept: the next call tries again (the file may have been written meanwhile, the server started).
      if (entry.opened === opened) entry.opened = undefined;
      throw new QueryError(
        'unknown-store',
        `Cannot open store ${dataValue(entry.name)} (${dataValue(entry.location)}): ${dataValue(err instanceof Error ? err.message : String(err))}`,
      );
    }
    const state = current.fileState?.() ?? 'ok';
    if (state === 'ok') return current.store;
    // Reported once, then forgotten: the model learns that earlier answers (and their offsets) were about another
    // file, and the next call opens the file at the path now, instead of failing until the server restarts.
    if (entry.opened === opened) entry.opened = undefined;
    try {
      await current.close();
    } catch {
      // The old connection is of no further use either way.
    }
    throw new QueryError(
      'store-changed',
      state === 'replaced'
        ? `Store ${dataValue(entry.name)} (${dataValue(entry.location)}) was replaced by another file since it was opened, so this call read nothing. Earlier answers, and the offsets they gave, were about the old file: call again to read the file now at that path.`
        : `Store ${dataValue(entry.name)} (${dataValue(entry.location)}) was deleted or moved away since it was opened, so this call read nothing. Ask the user where the file went; a call after it is restored reads it again.`,
    );
  }

  /** Closes every store opened. */
  async close(): Promise<void> {
    for (const e of this.entries) {
      const opened = e.opened;
      e.opened = undefined;
      if (!opened) continue;
      try {
        await (await opened).close();
      } catch {
        // A store that never opened has nothing to close.
      }
    }
  }
}

/** A short name for a server address: its kind, host and database (`postgres-db.example.com-app`). */
function nameOfAddress(address: string): string {
  try {
    const u = new URL(address);
    const db = u.pathname.replace(/^\//, '');
    return [u.protocol.startsWith('redis') ? 'redis' : 'postgres', u.hostname, db].filter(Boolean).join('-');
  } catch {
    return 'server';
  }
}
