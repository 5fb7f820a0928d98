/**
 * The doctor through the store worker (VS Code's way, issue 45): a check and a one-finding repair answered there with
 * the store's own shapes; a file a writer keeps locked is waited for (the host hears `waiting`) and then reported
 * `locked` with nothing written; a cancel while waiting writes nothing; errors come back as the same classes.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { findingCount } from '../../../../src/store/doctor/doctorReport';
import { StoreRequestCancelledError } from '../../../../src/store/worker/storeClient';
import { makeDoctorFixture } from '../../../support/doctorFixtures';
import { useWorkerClient } from '../../../support/workerClient';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** A child process holding the file's write lock for `ms`; resolves once it holds it, with its end. */
async function holdLock(dbPath: string, ms: number): Promise<{ kill(): void; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'support', 'lockHolder.ts'), dbPath, String(ms)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: ROOT,
  });
  const exited = new Promise((r) => child.on('exit', r));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    void exited.then(() => reject(new Error('the lock holder exited before locking')));
  });
  return { kill: () => child.kill(), exited };
}

describe('the doctor in the store worker', function () {
  this.timeout(30_000);
  const worker = useWorkerClient('asi-doctor-worker-');
  let n = 0;
  const fixture = (kind: Parameters<typeof makeDoctorFixture>[0]) => {
    const file = join(worker.dir, `${n++}-${kind}.db`);
    makeDoctorFixture(kind, file);
    return file;
  };

  it('checks a file and repairs one finding, naming the backup', async () => {
    const file = fixture('dangling-tool-call');
    const report = await worker.client().checkSessionFile(file);
    assert.equal(findingCount(report), 1);
    const f = report.findings[0]!;
    assert.equal(f.kind, 'dangling-tool-call');
    const backup = join(worker.dir, 'repair.backup.db');
    const outcome = await worker
      .client()
      .repairSessionFile(file, { backup, target: { kind: f.kind, session: f.session!, branch: f.branch! } });
    assert.equal(outcome.backup, backup);
    assert.equal(outcome.counts.outputsAdded, 1);
    assert.equal(findingCount(outcome.after), 0);
    assert.ok(existsSync(backup));
  });

  it('waits for a writer, says so, then reports the file locked with nothing written', async () => {
    const file = fixture('orphan-usage');
    const backup = join(worker.dir, 'locked.backup.db');
    const holder = await holdLock(file, 5000);
    let waited = false;
    try {
      await assert.rejects(
        worker
          .client()
          .repairSessionFile(
            file,
            { backup, target: { kind: 'orphan-usage', session: 'alice' } },
            { lockWaitMs: 300, onWaiting: () => (waited = true) },
          ),
        (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'locked',
      );
    } finally {
      holder.kill();
      await holder.exited;
    }
    assert.equal(waited, true);
    assert.equal(existsSync(backup), false);
    assert.equal(findingCount(await worker.client().checkSessionFile(file)), 1);
  });

  it('stops waiting when cancelled, and writes nothing', async () => {
    const file = fixture('orphan-usage');
    const backup = join(worker.dir, 'cancelled.backup.db');
    const holder = await holdLock(file, 5000);
    const controller = new AbortController();
    try {
      await assert.rejects(
        worker
          .client()
          .repairSessionFile(file, { backup }, { lockWaitMs: 10_000, signal: controller.signal, onWaiting: () => controller.abort() }),
        StoreRequestCancelledError,
      );
    } finally {
      holder.kill();
      await holder.exited;
    }
    assert.equal(existsSync(backup), false);
  });

  it('rejects a file that is no session store with the store error class', async () => {
    const file = join(worker.dir, 'missing.db');
    await assert.rejects(
      worker.client().checkSessionFile(file),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'not-found',
    );
  });
});
