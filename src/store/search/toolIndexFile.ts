/**
 * The search index's file (toolIndex.ts says what it holds and how it is used): its format, as one of our own stores
 * (src/store/sqlite/ownStoreFile.ts), the flags and partial indexes its queries read, where a session file's index is
 * and how many a folder keeps, and the hashes that tell a rewritten session file.
 */
import { createHash } from 'node:crypto';
import { readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { OwnStoreFormat } from '../sqlite/ownStoreFile';

export const SEARCH_INDEX_FORMAT = 1;
/** Marks the file as ours (`PRAGMA application_id`): "ASIX" (the review store is "ASIR", the trace store "ASIT"). */
export const SEARCH_INDEX_APPLICATION_ID = 0x41534958;
/** At most this many index files in a folder (one per session file searched): the least recently used go first. */
export const MAX_SEARCH_INDEXES = 64;
/** Messages whose text hash is kept to tell a rewritten file (spread over the indexed ids). */
export const MAX_ANCHORS = 32;

/** `tool_items.flags`: an item with no role (a tool call, an output, a built-in tool's item). */
export const TOOL_ITEM = 1;
/** `tool_items.flags`: an output (its `call_id` names its call, not itself). */
export const OUTPUT = 2;
/** `tool_items.flags`: a failed tool call or output (`failedReason`). */
export const FAILED = 4;
/** `tool_items.flags`, on an item with a call id and no name: an item that may teach its call's name is indexed. */
export const RESOLVED = 8;

// The conditions of the partial indexes below, word for word: SQLite uses a partial index only for a query whose WHERE
// holds its condition as written.
export const FAILED_ROWS = 'flags & 4 <> 0';
/** Calls of no role without a name of their own (a structure row may name them): they may teach any tool's name. */
export const NAMELESS_CALLS = 'name IS NULL AND flags & 3 = 1 AND call_id IS NOT NULL';
/** Items with a call id and no name whose call no indexed item carries (`RESOLVED` unset). */
export const UNRESOLVED_ROWS = 'name IS NULL AND call_id IS NOT NULL AND flags & 8 = 0';
/** Tool items with no name of their own: a structure row may name them (`namedOnly`). */
export const NAMELESS_TOOL_ITEMS = 'name IS NULL AND flags & 1 <> 0';

const DDL = `
CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tool_items (
  message_id INTEGER PRIMARY KEY,
  name TEXT,
  call_id TEXT,
  flags INTEGER NOT NULL
);
CREATE INDEX tool_items_by_call ON tool_items (call_id) WHERE call_id IS NOT NULL;
CREATE INDEX tool_items_by_name ON tool_items (name) WHERE name IS NOT NULL;
CREATE INDEX tool_items_failed ON tool_items (message_id) WHERE ${FAILED_ROWS};
CREATE INDEX tool_items_nameless_calls ON tool_items (message_id) WHERE ${NAMELESS_CALLS};
CREATE INDEX tool_items_unresolved ON tool_items (message_id) WHERE ${UNRESOLVED_ROWS};
CREATE INDEX tool_items_nameless ON tool_items (message_id) WHERE ${NAMELESS_TOOL_ITEMS};
`;

export class SearchIndexError extends Error {
  constructor(
    readonly problem: 'not-ours' | 'newer-format' | 'not-found',
    message: string,
  ) {
    super(message);
    this.name = 'SearchIndexError';
  }
}

export const SEARCH_INDEX_FILE: OwnStoreFormat = {
  what: 'search index',
  kept: 'Search indexes',
  metaTable: 'index_meta',
  mainTable: 'tool_items',
  format: SEARCH_INDEX_FORMAT,
  applicationId: SEARCH_INDEX_APPLICATION_ID,
  ddl: DDL,
  error: (problem, message) => new SearchIndexError(problem, message),
};

/** The index file's name for a session file: a hash of its real path (the same file by any path, one index). */
export function indexName(sessionPath: string): string {
  return createHash('sha256').update(realPathOf(sessionPath)).digest('hex').slice(0, 24);
}

export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The kept (id, hash) pairs, or null when the meta row is not what we write (then the index starts again). */
export function anchorsOf(text: string | undefined): [number, string][] | null {
  try {
    const value: unknown = JSON.parse(text ?? '[]');
    if (!Array.isArray(value)) return null;
    return value.every((a) => Array.isArray(a) && a.length === 2 && Number.isSafeInteger(a[0]) && typeof a[1] === 'string')
      ? (value as [number, string][])
      : null;
  } catch {
    return null;
  }
}

/** A message's session and text, hashed: what tells a message from another one at its id in a rewritten file. */
export function rowHash(sessionId: unknown, data: unknown): string {
  const hash = createHash('sha1');
  for (const value of [sessionId, data]) {
    if (typeof value === 'string') hash.update(value, 'utf8');
    else if (value instanceof Uint8Array) hash.update(value);
    else hash.update(String(value));
    hash.update('\u0000');
  }
  return hash.digest('base64');
}

/** `anchors` with (id, hash) added, thinned to `MAX_ANCHORS` by dropping every other one but the first and the last. */
export function withAnchor(anchors: [number, string][], id: number, hash: string): [number, string][] {
  let out = [...anchors.filter(([a]) => a !== id), [id, hash] as [number, string]];
  while (out.length > MAX_ANCHORS) out = out.filter((_, i) => i === 0 || i === out.length - 1 || i % 2 === 0);
  return out;
}

/** Removes the least recently used index files of `dir` past `MAX_SEARCH_INDEXES`, never `keep`. */
export function pruneIndexes(dir: string, keep: string): void {
  let files: { path: string; used: number }[];
  try {
    files = readdirSync(dir)
      .filter((name) => /^[0-9a-f]{24}\.db$/.test(name))
      .map((name) => {
        const path = join(dir, name);
        return { path, used: statSync(path).mtimeMs };
      });
  } catch {
    return;
  }
  if (files.length <= MAX_SEARCH_INDEXES) return;
  files.sort((a, b) => a.used - b.used);
  for (const f of files.slice(0, files.length - MAX_SEARCH_INDEXES)) {
    if (f.path === keep) continue;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${f.path}${suffix}`, { force: true });
  }
}
