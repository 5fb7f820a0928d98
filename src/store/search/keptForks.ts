/**
 * The branch trees a connection's searches share. A search names the branches sharing each hit, and a review filter
 * tells a turn's own rows from a branch's copies, both from the session's tree (`readBranchForks`): about 220 index
 * seeks on the bench's file A (100,000 turns, five branches), half of a search that reads a few turns (`is:bad`: 0.5
 * of its 1.1 ms). The MCP server's connections and the search worker's (kept while the worker is) serve search after
 * search, so the trees are kept per connection until anything is committed to the file: the connection's own change
 * watcher (`data_version` and its own row changes) is asked before a kept tree is used, and a tree read after that
 * question is dropped by the next one if a commit came in between.
 */
import type { ChangeWatcher } from '../inspector/changeWatcher';
import type { SessionDatabase } from '../inspector/sessionDatabase';
import type { ForkFacts } from '../../shared/turnOrigin';

interface Kept {
  watcher: ChangeWatcher;
  trees: Map<string, ForkFacts[]>;
}

const kept = new WeakMap<SessionDatabase, Kept>();

/**
 * The trees kept for `db`'s sessions (session id → tree), none when the file changed since the last call: a scan asks
 * once, before its first tree, and adds the trees it reads. Throws what a read of `db` throws (a file
 * deleted or replaced, a closed connection).
 */
export function keptForks(db: SessionDatabase): Map<string, ForkFacts[]> {
  const k = kept.get(db);
  if (!k) {
    const fresh = { watcher: db.createChangeWatcher(), trees: new Map<string, ForkFacts[]>() };
    kept.set(db, fresh);
    return fresh.trees;
  }
  // A new map, not the old one emptied: a scan still running on this connection keeps the trees it started with.
  if (k.watcher.hasChanged()) k.trees = new Map();
  return k.trees;
}
