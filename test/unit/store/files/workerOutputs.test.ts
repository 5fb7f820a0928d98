/**
 * The output rules through the store worker, where the extension runs its exports and opens its review stores: the
 * refusals cross the thread as the same `OutputFileError`, and a dialog-confirmed overwrite replaces the file.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OutputFileError } from '../../../../src/store/files/outputFileError';
import { writeExportFixture } from '../export/exportFixtures';
import { useWorkerClient } from '../../../support/workerClient';

const problem = (p: string) => (e: unknown) => e instanceof OutputFileError && e.problem === p;

describe('files the store worker writes', function () {
  this.timeout(60_000);
  const worker = useWorkerClient('asi-worker-outputs-');
  const db = join(worker.dir, 'd.db');
  const request = { sessionId: 'weather-trip', branchId: 'main' };
  before(() => writeExportFixture(db));

  it('an export onto the session file or over an unconfirmed file is refused; a confirmed one replaces it', async () => {
    const before = readFileSync(db);
    await assert.rejects(worker.client().exportSessionToFile(db, db, 'jsonl', request, {}, { overwrite: true }), problem('is-input'));
    assert.deepEqual(readFileSync(db), before);
    const out = join(worker.dir, 'out.jsonl');
    writeFileSync(out, 'mine\n');
    await assert.rejects(worker.client().exportSessionToFile(db, out, 'jsonl', request), problem('exists'));
    assert.equal(readFileSync(out, 'utf8'), 'mine\n');
    await worker.client().exportSessionToFile(db, out, 'jsonl', request, {}, { overwrite: true });
    assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, 16);
  });

  it('a review store beside the file where a dangling link was planted: refused, nothing created outside (issue 46)', async () => {
    const outside = join(worker.dir, 'outside.db');
    symlinkSync(outside, `${db}.reviews.db`);
    await assert.rejects(worker.client().openReviewStore(`${db}.reviews.db`), problem('symlink'));
    assert.equal(existsSync(outside), false);
  });
});
