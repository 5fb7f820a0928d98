/**
 * The page cache of a one-pass reader (issue 43: the CLI's peak memory): the inspector and the export take a size in
 * KiB within documented bounds, set it on their connections, and refuse anything else before opening the file.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession, InvalidArgumentError, openDatabase, openSessionDatabase } from '../../../../src/store';
import { exportSession } from '../../../../src/store/export/sessionExport';
import { applyPageCache, MAX_PAGE_CACHE_KIB, MIN_PAGE_CACHE_KIB, ONE_PASS_PAGE_CACHE_KIB } from '../../../../src/store/sqlite/pageCache';
import { tempDir } from '../../../support/tempFiles';

describe('pageCacheKiB: the page cache of a one-pass reader', () => {
  let tmp: ReturnType<typeof tempDir>;
  let path: string;
  beforeEach(async () => {
    tmp = tempDir('asi-page-cache-');
    path = join(tmp.dir, 's.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: path, createTables: true });
    await s.addItems([{ role: 'user', content: 'hello' }]);
    s.close();
  });
  afterEach(() => tmp.cleanup());

  it('sets the connection cache in KiB, leaving the driver default when not given', () => {
    const db = openDatabase(path, { readonly: true });
    try {
      const size = () => Number(db.prepare('PRAGMA cache_size').get<{ cache_size: number }>()?.cache_size);
      const before = size();
      applyPageCache(db, undefined);
      assert.equal(size(), before);
      applyPageCache(db, ONE_PASS_PAGE_CACHE_KIB);
      assert.equal(size(), -ONE_PASS_PAGE_CACHE_KIB);
    } finally {
      db.close();
    }
  });

  it('refuses a size out of bounds or not whole, before the file is opened', async () => {
    for (const bad of [0, MIN_PAGE_CACHE_KIB - 1, MAX_PAGE_CACHE_KIB + 1, 1.5, Number.NaN, -2048]) {
      assert.throws(() => openSessionDatabase(path, { pageCacheKiB: bad }), InvalidArgumentError, String(bad));
      // Not even a missing file is looked at first: the argument is wrong whatever the file.
      assert.throws(() => openSessionDatabase(join(tmp.dir, 'missing.db'), { pageCacheKiB: bad }), InvalidArgumentError);
      await assert.rejects(
        exportSession(path, 'json', { sessionId: 's1' }, () => undefined, { pageCacheKiB: bad }),
        InvalidArgumentError,
      );
    }
    for (const good of [MIN_PAGE_CACHE_KIB, ONE_PASS_PAGE_CACHE_KIB, MAX_PAGE_CACHE_KIB])
      openSessionDatabase(path, { pageCacheKiB: good }).close();
    let text = '';
    await exportSession(path, 'json', { sessionId: 's1' }, (chunk) => void (text += chunk), { pageCacheKiB: ONE_PASS_PAGE_CACHE_KIB });
    assert.match(text, /hello/);
  });
});
