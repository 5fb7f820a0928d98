/**
 * The history guard store's file format (docs/history-guard.md): a SQLite file of our own — never a session file,
 * whose format is Python's. Items are kept once each, by the SHA-256 of their stored `message_data` text; per guarded
 * file (path and device/inode, so a file replaced at the same path keeps its own history; its birth time and the row
 * last seen with the highest id are in `guard_meta`, `birth:<file id>` and `witness:<file id>`, and a record whose inode
 * went to another file has `~<file id>` added to `ino`, guardStore.ts `retireFile`), session and branch, the
 * structure rows last seen (which item each holds, in order); and the layers: a branch's list as it was before items
 * were removed or replaced, when that was noticed and who did it when known.
 */
import { HistoryGuardError } from './guardErrors';
import type { OwnStoreFormat } from '../sqlite/ownStoreFile';

export const GUARD_STORE_FORMAT = 1;
/** Marks the file as ours (`PRAGMA application_id`): "ASIG" ("ASIT" traces, "ASIR" reviews, "ASIP" replay marks). */
export const GUARD_STORE_APPLICATION_ID = 0x41534947;

// Hashes are 32-byte BLOBs (half the bytes of hex); lists refer to items by their integer id, 1–4 bytes a row.
// `guard_seen` and `guard_layer_items` are WITHOUT ROWID: their primary key is the only way they are read.
const DDL = `
CREATE TABLE guard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE guard_files (
  file_id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  dev TEXT NOT NULL,
  ino TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  replaced_ms INTEGER,
  structure_count INTEGER,
  max_structure_id INTEGER,
  message_count INTEGER,
  max_message_id INTEGER,
  UNIQUE (path, dev, ino)
);
CREATE TABLE guard_items (
  item_id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  message_data TEXT NOT NULL
);
CREATE TABLE guard_seen (
  file_id INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  structure_id INTEGER NOT NULL,
  branch_id TEXT NOT NULL,
  sequence_number INTEGER NOT NULL,
  message_id INTEGER NOT NULL,
  item_id INTEGER NOT NULL,
  PRIMARY KEY (file_id, session_id, structure_id)
) WITHOUT ROWID;
CREATE TABLE guard_layers (
  layer_id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  noticed_ms INTEGER NOT NULL,
  cause TEXT NOT NULL CHECK (cause IN ('our-compaction', 'another-writer')),
  item_count INTEGER NOT NULL,
  removed_count INTEGER NOT NULL
);
CREATE INDEX guard_layers_by_branch ON guard_layers (file_id, session_id, branch_id, noticed_ms);
CREATE TABLE guard_layer_items (
  layer_id INTEGER NOT NULL,
  position INTEGER NOT NULL,
  item_id INTEGER NOT NULL,
  removed INTEGER NOT NULL,
  PRIMARY KEY (layer_id, position)
) WITHOUT ROWID;
`;

/** The history guard store as one of our own files (src/store/sqlite/ownStoreFile.ts). */
export const GUARD_STORE_FILE: OwnStoreFormat = {
  what: 'history guard store',
  kept: 'Guarded histories',
  metaTable: 'guard_meta',
  mainTable: 'guard_items',
  format: GUARD_STORE_FORMAT,
  applicationId: GUARD_STORE_APPLICATION_ID,
  ddl: DDL,
  error: (problem, message) => new HistoryGuardError(problem === 'not-ours' ? 'not-guard-store' : problem, message),
};
