/**
 * Our own stores' files (src/store/sqlite/ownStoreFile.ts): one of them given where another goes is refused,
 * untouched, naming the store it is (not a session file it is not), in English ("an experiment store").
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase } from '../../../../src/store';
import { EXPERIMENT_STORE_FILE } from '../../../../src/store/experiments/experimentSchema';
import { GUARD_STORE_FILE } from '../../../../src/store/guard/guardSchema';
import { REPLAY_STORE_FILE } from '../../../../src/store/replay/replaySchema';
import { REVIEW_STORE_FILE } from '../../../../src/store/reviews/reviewSchema';
import { SEARCH_INDEX_FILE } from '../../../../src/store/search/toolIndexFile';
import { ensureOwnSchema, type OwnStoreFormat } from '../../../../src/store/sqlite/ownStoreFile';
import { TRACE_STORE_FILE } from '../../../../src/store/traces/traceSchema';
import { tempDir } from '../../../support/tempFiles';

const STORES: readonly OwnStoreFormat[] = [
  EXPERIMENT_STORE_FILE,
  GUARD_STORE_FILE,
  REPLAY_STORE_FILE,
  REVIEW_STORE_FILE,
  SEARCH_INDEX_FILE,
  TRACE_STORE_FILE,
];

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const a = (what: string) => `${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what}`;

/** What opening `path` as the store `f` throws (its checks alone, on a connection of our own). */
function refusal(path: string, f: OwnStoreFormat): Error {
  const db = openDatabase(path, { fileMustExist: true });
  try {
    ensureOwnSchema(db, path, f);
  } catch (err) {
    assert.ok(err instanceof Error);
    return err;
  } finally {
    db.close();
  }
  assert.fail(`${path} opened as ${a(f.what)}`);
}

describe('our own store files', () => {
  const tmp = tempDir('asi-own-store-');
  after(() => tmp.cleanup());

  it('one of our stores where another goes: refused untouched, named as the store it is', () => {
    for (const held of STORES) {
      const path = join(tmp.dir, `${held.what.replace(/ /g, '-')}.db`);
      const db = openDatabase(path);
      ensureOwnSchema(db, path, held);
      db.close();
      const before = sha(path);
      for (const wanted of STORES.filter((f) => f !== held)) {
        const err = refusal(path, wanted);
        assert.equal(
          err.message,
          `${path} is ${a(held.what)}, not ${a(wanted.what)}. ${wanted.kept} are kept in a file of their own, apart from the ${held.what}: choose another path.`,
        );
        const own = wanted.error('not-ours', err.message);
        assert.equal(err.constructor, own.constructor, "the store's own error class");
        assert.equal((err as { problem?: string }).problem, (own as { problem?: string }).problem);
      }
      assert.equal(sha(path), before, `${held.what} untouched`);
    }
  });

  it('a session file: "not an experiment store", never in a session file', async () => {
    const path = join(tmp.dir, 'session.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    await s.addItems([{ role: 'user', content: 'hi' }]);
    s.close();
    for (const f of STORES) {
      const err = refusal(path, f);
      assert.match(err.message, new RegExp(`is not ${a(f.what)} \\(it has the tables .*agent_messages`));
      assert.match(err.message, new RegExp(`${f.kept} are kept in a file of their own, never in a session file`));
    }
    assert.match(refusal(path, EXPERIMENT_STORE_FILE).message, /is not an experiment store /);
  });
});
