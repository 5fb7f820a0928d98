/**
 * The copy of a server store's session to a local file (copyToFile.ts) by the output rules: never over an existing
 * file, never onto a file the caller has open, its temporary file never at a guessable name a link could be planted
 * at. The server is a small in-memory source of rows (what PostgreSQL and Redis answer is covered in test/remote);
 * what is checked is the file written, read back through the inspector.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { openSessionDatabase } from '../../../../src/store';
import { OutputFileError } from '../../../../src/store/files/outputFileError';
import { copyRemoteSessionToFile } from '../../../../src/store/remote/copyToFile';
import type { RemoteRow, RemoteStoreBrowser } from '../../../../src/store/remote/remoteStore';
import { tempDir } from '../../../support/tempFiles';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const problem = (p: string) => (e: unknown) => e instanceof OutputFileError && e.problem === p;

/** A server store holding one session of two items, answering the two reads the copy makes. */
function serverWithOneSession(): RemoteStoreBrowser {
  const rows: RemoteRow[] = [
    { position: 1, id: 1, text: JSON.stringify({ role: 'user', content: 'Hi' }), createdAt: null, cursor: '1' },
    { position: 2, id: 2, text: JSON.stringify({ role: 'assistant', content: 'Hello' }), createdAt: null, cursor: '2' },
  ];
  const source = {
    label: 'test server',
    getSession: async (id: string) =>
      id === 'trip' ? { sessionId: 'trip', createdAt: null, updatedAt: null, itemCount: rows.length } : null,
    readRowsAfter: async (_id: string, after: { position: number } | null, limit: number) =>
      rows.filter((r) => r.position > (after?.position ?? 0)).slice(0, limit),
  };
  return source as unknown as RemoteStoreBrowser;
}

describe('copying a server session to a local file', () => {
  const tmp = tempDir('asi-remote-copy-');
  after(() => tmp.cleanup());

  it('writes the session into a new file, leaving no temporary file', async () => {
    const target = join(tmp.dir, 'copy.db');
    const result = await copyRemoteSessionToFile(serverWithOneSession(), 'trip', target);
    assert.equal(result.copied, 2);
    const db = openSessionDatabase(target, { readonly: true });
    try {
      assert.deepEqual(
        db.listSessions().map((s) => [s.sessionId, s.messageCount]),
        [['trip', 2]],
      );
    } finally {
      db.close();
    }
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.startsWith('.copy.db')),
      [],
    );
  });

  it('refuses an existing file, and a file the caller reads, byte for byte as they were', async () => {
    const existing = join(tmp.dir, 'existing.db');
    writeFileSync(existing, 'mine');
    await assert.rejects(copyRemoteSessionToFile(serverWithOneSession(), 'trip', existing), problem('exists'));
    assert.equal(readFileSync(existing, 'utf8'), 'mine');
    const open = join(tmp.dir, 'open.db');
    await copyRemoteSessionToFile(serverWithOneSession(), 'trip', open);
    const before = sha(open);
    const link = join(tmp.dir, 'link-to-open.db');
    symlinkSync(open, link);
    await assert.rejects(copyRemoteSessionToFile(serverWithOneSession(), 'trip', `${open}-wal`, { inputs: [link] }), problem('is-input'));
    assert.equal(sha(open), before);
  });

  it("a failure of the file's writer names the target, not the temporary file it had open", async () => {
    const target = join(tmp.dir, 'failing.db');
    // What a driver error looks like: the message names the file the connection was opened on.
    const openTarget = async (o: { dbPath: string }): Promise<never> => {
      throw new Error(`unable to open database file ${o.dbPath}`);
    };
    await assert.rejects(copyRemoteSessionToFile(serverWithOneSession(), 'trip', target, { openTarget }), (e: unknown) => {
      assert.equal((e as Error).message, `unable to open database file ${target}`);
      return true;
    });
    assert.equal(existsSync(target), false);
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.startsWith('.failing.db')),
      [],
    );
  });

  it('never writes through a link planted at the temporary name the copy used to take', async () => {
    const target = join(tmp.dir, 'planted.db');
    const outside = join(tmp.dir, 'outside.db');
    symlinkSync(outside, join(dirname(target), `.${basename(target)}.${process.pid}.partial`));
    await copyRemoteSessionToFile(serverWithOneSession(), 'trip', target);
    assert.equal(existsSync(outside), false, 'nothing created where the link pointed');
    const db = openSessionDatabase(target, { readonly: true });
    assert.equal(db.listSessions().length, 1);
    db.close();
  });
});
