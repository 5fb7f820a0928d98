/**
 * An import whose target is replaced or deleted while it writes (`mv other.db target.db` during the run): SQLite keeps
 * writing the file it opened, so a COMMIT would land in the old, unlinked file while the command reports success, and
 * the old file's -wal would stay beside the new one. The import checks the path under the write lock and last of all
 * before COMMIT: it rolls back, says nothing was imported, and leaves the file now at the path readable as itself.
 * The swap is made at points the import exposes: its progress callback (mid-write) and its cancel signal, read once
 * more after the last write.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SessionDatabaseError,
  exportSessionToFile,
  importJsonFile,
  importJsonlFile,
  moveStaleWalAside,
  staleWalAt,
  type ImportOptions,
} from '../../../../src/store';
import { holdReadTransaction, sessionsAt, startHolder, writeSession } from '../../../support/staleWal';
import { tempDir } from '../../../support/tempFiles';

const sha256 = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
/** Items per import: more than one progress call (every 1,000), and pages spilled to the -wal on node:sqlite. */
const ITEMS = 2500;

const walSize = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

async function refusal(run: () => Promise<unknown>, problem: 'replaced' | 'deleted'): Promise<SessionDatabaseError> {
  try {
    await run();
  } catch (err) {
    assert.ok(err instanceof SessionDatabaseError, String(err));
    assert.equal(err.problem, problem, err.message);
    return err;
  }
  assert.fail(`the import succeeded: expected SessionDatabaseError ${problem}`);
}

/**
 * A signal whose every read (`throwIfCancelled`) first runs `onRead`: the import reads it every 1,000 items and once
 * more after its last write, right before COMMIT.
 */
function signalRunning(onRead: () => void): AbortSignal {
  return {
    get aborted() {
      onRead();
      return false;
    },
  } as AbortSignal;
}

describe('import: a target replaced or deleted while the import writes', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let target: string;
  let other: string;
  let jsonl: string;
  let json: string;

  before(async () => {
    tmp = tempDir('asi-import-replaced-');
    const items = Array.from({ length: ITEMS }, (_, i) =>
      JSON.stringify(
        i % 2 === 0
          ? { role: 'user', content: `imported question ${i} ${'x'.repeat(400)}` }
          : { role: 'assistant', content: `answer ${i}` },
      ),
    );
    jsonl = join(tmp.dir, 'big.jsonl');
    writeFileSync(jsonl, `${items.join('\n')}\n`);
    // The JSON export of the same items, in the layout the export writes (read a line at a time).
    const source = join(tmp.dir, 'source.db');
    await importJsonlFile(source, jsonl, { sessionId: 'imp', createTables: true });
    json = join(tmp.dir, 'big.json');
    await exportSessionToFile(source, json, 'json', { sessionId: 'imp' });
  });
  after(() => tmp.cleanup());

  let n = 0;
  beforeEach(async () => {
    target = join(tmp.dir, `d${++n}.db`);
    other = join(tmp.dir, `other${n}.db`);
    await writeSession(target, 'old', 4);
    await writeSession(other, 'new', 6);
  });

  const formats = [
    ['JSONL', (opts: ImportOptions) => importJsonlFile(target, jsonl, { sessionId: 'imp', ...opts })],
    ['JSON', (opts: ImportOptions) => importJsonFile(target, json, { sessionId: 'imp', ...opts })],
  ] as const;

  for (const [format, importInto] of formats) {
    it(`${format}: another file renamed over the path mid-write: replaced, nothing imported, the new file reads as itself`, async () => {
      const newFile = sha256(other);
      let swapped = false;
      const err = await refusal(
        () =>
          importInto({
            onProgress: (done) => {
              if (swapped || done !== 1000) return;
              swapped = true;
              renameSync(other, target);
            },
          }),
        'replaced',
      );
      assert.ok(swapped);
      assert.match(err.message, /d\d+\.db was replaced by another file while the import ran, so nothing was imported/);
      assert.match(err.message, /rolled back before its COMMIT/);
      assert.equal(sha256(target), newFile, 'the new file was not written');
      // Our -wal (the old file's) was emptied: nothing of the old file is applied to the new one.
      assert.equal(walSize(target), 0);
      assert.equal(staleWalAt(target), undefined);
      assert.deepEqual(sessionsAt(target), ['new:6']);
    });
  }

  it('the swap after the last write, at the last look before COMMIT, is refused too', async () => {
    let armed = false;
    let swapped = false;
    const err = await refusal(
      () =>
        importJsonlFile(target, jsonl, {
          sessionId: 'imp',
          // The last progress call inside the transaction (2,000 of 2,500) arms it: the next read of the signal is
          // the one after every row was written.
          onProgress: (done) => (armed ||= done === 2000),
          signal: signalRunning(() => {
            if (!armed || swapped) return;
            swapped = true;
            renameSync(other, target);
          }),
        }),
      'replaced',
    );
    assert.ok(swapped);
    assert.match(err.message, /nothing was imported/);
    assert.deepEqual(sessionsAt(target), ['new:6']);
  });

  it('the path moved away mid-write: deleted, nothing imported into the moved file', async () => {
    const moved = join(tmp.dir, `moved${n}.db`);
    const err = await refusal(
      () =>
        importJsonlFile(target, jsonl, {
          sessionId: 'imp',
          onProgress: (done) => done === 1000 && renameSync(target, moved),
        }),
      'deleted',
    );
    assert.match(err.message, /d\d+\.db was deleted or moved while the import ran, so nothing was imported/);
    assert.match(err.message, /Put the file back, or import into it where it is now/);
    assert.equal(existsSync(target), false);
    assert.deepEqual(sessionsAt(moved), ['old:4']);
  });

  it("another process holding the old file with frames in its -wal: they go into the old file, not the new one's view", async () => {
    const holder = startHolder('this node', target);
    try {
      await holder.ready;
      assert.ok(walSize(target) > 32, 'the holder left committed frames in the -wal');
      const newFile = sha256(other);
      await refusal(
        () => importJsonlFile(target, jsonl, { sessionId: 'imp', onProgress: (done) => done === 1000 && renameSync(other, target) }),
        'replaced',
      );
      // Left as they were, the holder's frames would be applied to the new file by every fresh connection: it
      // would read as the old file (or be refused as stale-wal).
      assert.equal(walSize(target), 0);
      assert.equal(sha256(target), newFile);
      assert.deepEqual(sessionsAt(target), ['new:6']);
    } finally {
      await holder.kill();
    }
  });

  it('a reader that keeps the old frames from being copied: the -wal is left, recorded as stale, and the message says to move it', async () => {
    // It commits a message first, never checkpointed (the old file's last turn, in the -wal), then keeps a snapshot.
    const reader = holdReadTransaction(target, {
      first: `
        db.prepare('PRAGMA wal_autocheckpoint = 0').get();
        db.exec("INSERT INTO agent_messages (session_id, message_data) VALUES ('old', '{\\"role\\": \\"user\\", \\"content\\": \\"last\\"}')");
      `,
    });
    try {
      await reader.ready;
      const err = await refusal(
        () =>
          importJsonlFile(target, jsonl, {
            sessionId: 'imp',
            busyTimeoutMs: 200,
            onProgress: (done) => done === 1000 && renameSync(other, target),
          }),
        'replaced',
      );
      assert.match(err.message, /nothing was imported/);
      assert.match(err.message, /d\d+\.db-wal belongs to the file that d\d+\.db replaced/);
      assert.match(err.message, /Move d\d+\.db-wal aside/);
      assert.ok(staleWalAt(target), 'recorded as stale: a fresh open here refuses it');
    } finally {
      await reader.kill();
    }
    moveStaleWalAside(target);
    assert.deepEqual(sessionsAt(target), ['new:6']);
  });
});
