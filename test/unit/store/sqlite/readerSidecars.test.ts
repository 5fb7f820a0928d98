/**
 * The -wal and -shm files a read-only connection leaves beside a WAL database, removed after it closed only when it
 * made them, nobody wrote since and no other connection has the file open; the database file never written. Runs on
 * whichever driver the suite is given (better-sqlite3 here, node:sqlite in the store suites on other Node versions).
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../../../src/store';
import { markSidecars, removeSidecarsLeft } from '../../../../src/store/sqlite/readerSidecars';
import { tempDir } from '../../../support/tempFiles';

const digest = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const sidecars = (path: string): [boolean, boolean] => [existsSync(`${path}-wal`), existsSync(`${path}-shm`)];

describe('the -wal and -shm files a reader leaves', () => {
  const tmp = tempDir('asi-sidecars-');
  after(() => tmp.cleanup());
  let n = 0;

  /** A WAL database with one row, closed (so neither -wal nor -shm is there). */
  function walFile(): string {
    const path = join(tmp.dir, `db-${++n}.db`);
    const db = openDatabase(path);
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES ('a')");
    db.close();
    assert.deepEqual(sidecars(path), [false, false]);
    return path;
  }
  /** Reads the file read-only, as the MCP server does, and closes. */
  function read(path: string): void {
    const db = openDatabase(path, { readonly: true, fileMustExist: true });
    db.prepare('SELECT count(*) FROM t').get();
    db.close();
  }

  it('a reader leaves both; removed after it closed, the database file unchanged', () => {
    const path = walFile();
    const before = digest(path);
    const mark = markSidecars(path);
    read(path);
    assert.deepEqual(sidecars(path), [true, true], 'a read-only connection cannot remove them itself');
    assert.equal(removeSidecarsLeft(mark), true);
    assert.deepEqual(sidecars(path), [false, false]);
    assert.equal(digest(path), before);
  });

  it('kept while another connection has the file open, or when they were there before', () => {
    const path = walFile();
    const mark = markSidecars(path);
    read(path);
    const other = openDatabase(path, { readonly: true, fileMustExist: true });
    try {
      other.prepare('SELECT count(*) FROM t').get();
      assert.equal(removeSidecarsLeft(mark), false);
      assert.deepEqual(sidecars(path), [true, true]);
    } finally {
      other.close();
    }
    // Now they were there before this reader: not its own to remove.
    const second = markSidecars(path);
    read(path);
    assert.equal(removeSidecarsLeft(second), false);
    assert.deepEqual(sidecars(path), [true, true]);
  });

  it('kept while a writer has the file open with frames in the -wal: the database file is not checkpointed into', () => {
    const path = walFile();
    const before = digest(path);
    const mark = markSidecars(path);
    read(path);
    const writer = openDatabase(path);
    try {
      writer.exec("INSERT INTO t VALUES ('b')");
      assert.equal(removeSidecarsLeft(mark), false);
      assert.equal(digest(path), before, 'the new row is in the -wal only');
    } finally {
      writer.close();
    }
  });
});
