/**
 * What a connection's searches share until the file changes: each session's branch tree, and the list of plain
 * sessions. A search names the branches sharing each hit and a review filter tells a turn's own rows from a branch's
 * copies, both from the session's tree (`readBranchForks`: about 220 index seeks on the bench's file A, 100,000 turns
 * and five branches); and every search ends with the plain sessions (messages but no structure rows), which take three
 * index seeks per session to list (9–10 ms on the bench's file B, 2,000 sessions, where the rows of 100 reviewed turns
 * take 0.6). The MCP server's connections and the search worker's (kept while the worker is) serve search after
 * search, so these are kept per connection until anything is committed to the file: the connection's own change
 * watcher (`data_version` and its own row changes) is asked before kept facts are used, and facts read after that
 * question are dropped by the next one if a commit came in between.
 */
import type { ChangeWatcher } from '../inspector/changeWatcher';
import type { SessionDatabase } from '../inspector/sessionDatabase';
import type { ForkFacts } from '../../shared/turnOrigin';

/** One snapshot's facts: filled as scans read them, replaced (never emptied) when the file changes. */
export interface KeptScanFacts {
  /** Session id → its branch tree. */
  trees: Map<string, ForkFacts[]>;
  /** The plain sessions in the order they were first written, once a scan listed them. */
  plainSessions?: string[];
}

interface Kept {
  watcher: ChangeWatcher;
  facts: KeptScanFacts;
}

const kept = new WeakMap<SessionDatabase, Kept>();

/**
 * The facts kept for `db`, fresh ones when the file changed since the last call: a scan asks before it first needs a
 * tree, and again before it lists the plain sessions at its end (a long scan may see a commit in between), and adds
 * what it reads. Throws what a read of `db` throws (a file deleted or replaced, a closed connection).
 */
export function keptScanFacts(db: SessionDatabase): KeptScanFacts {
  const k = kept.get(db);
  if (!k) {
    const fresh = { watcher: db.createChangeWatcher(), facts: { trees: new Map<string, ForkFacts[]>() } };
    kept.set(db, fresh);
    return fresh.facts;
  }
  // A new object, not the old one emptied: a scan still running on this connection keeps the trees it started with.
  if (k.watcher.hasChanged()) k.facts = { trees: new Map() };
  return k.facts;
}
