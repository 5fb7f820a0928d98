/**
 * A store worker that dies mid-request (test/support/crashingStoreWorker.ts ends the real worker's thread inside an
 * import's transaction): the host gets a typed error, the worker is started again for the next request, which works,
 * and what was acknowledged before the crash is in the file while the import under way left nothing. A worker that
 * keeps dying is not restarted past `MAX_WORKER_RESTARTS_IN_A_ROW`.
 */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDatabaseError } from '../../../../src/store';
import { MAX_WORKER_RESTARTS_IN_A_ROW, StoreClient } from '../../../../src/store/worker/storeClient';
import { StoreWorkerStoppedError } from '../../../../src/store/worker/workerErrors';
import { TempFolder, mk } from '../inspector/inspectorFixtures';

const CRASHING_WORKER = join(__dirname, '..', '..', '..', 'support', 'crashingStoreWorker.ts');

const stopped = (final: boolean) => (err: unknown) =>
  err instanceof StoreWorkerStoppedError && err instanceof SessionDatabaseError && err.problem === 'io' && err.final === final;

describe('store worker: a crash mid-request', function () {
  this.timeout(60_000);
  let folder: TempFolder;
  let client: StoreClient;
  beforeEach(() => {
    folder = new TempFolder();
    client = new StoreClient(CRASHING_WORKER, { execArgv: ['--require', 'tsx/cjs'] });
  });
  afterEach(async () => {
    await client.dispose();
    folder.cleanup();
  });

  /** A JSONL file big enough that its import reports progress inside its transaction (every 1,000 items). */
  function bigJsonl(): string {
    const file = folder.path('big.jsonl');
    writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify(mk.user(`imported ${i}`))).join('\n') + '\n');
    return file;
  }

  /** An import that kills the worker inside its transaction; resolves with what the host got. */
  async function crashImport(path: string, sessionId = 'imported'): Promise<void> {
    await assert.rejects(client.importSessionFile(path, bigJsonl(), { sessionId, createTables: true }), stopped(false));
  }

  it('rejects what was in flight with a typed error, restarts for the next request, and keeps what was acknowledged', async () => {
    const path = folder.path('crash.db');
    const session = await client.openSession({ sessionId: 'kept', dbPath: path, createTables: true });
    await session.addItems([mk.user('acknowledged before the crash'), mk.assistant('and kept')]);
    const before = await client.openDatabase(path);
    assert.deepEqual(
      (await before.listSessions()).map((s) => s.sessionId),
      ['kept'],
    );

    await crashImport(path);
    assert.equal(client.inFlight, 0, 'nothing is left waiting for the dead worker');
    // Handles of the dead worker say so, typed, instead of hanging or reading another worker's handle.
    await assert.rejects(before.listSessions(), stopped(false));
    await assert.rejects(session.getItems(), stopped(false));

    // The next request starts a new worker, and works: reads, and a write.
    const after = await client.openDatabase(path);
    assert.deepEqual(
      (await after.listSessions()).map((s) => s.sessionId),
      ['kept'],
      'the import under way left no session',
    );
    const again = await client.openSession({ sessionId: 'kept', dbPath: path });
    await again.addItems([mk.user('after the restart')]);
    assert.deepEqual(await again.getItems(), [
      mk.user('acknowledged before the crash'),
      mk.assistant('and kept'),
      mk.user('after the restart'),
    ]);
    await again.close();
    await after.close();

    // Read in this thread, past the worker: the file is whole, and holds none of the import's rows.
    const raw = folder.raw(path);
    assert.equal(raw.prepare('PRAGMA integrity_check').get<{ integrity_check: string }>()?.integrity_check, 'ok');
    const count = (sessionId: string) =>
      raw.prepare('SELECT COUNT(*) AS n FROM agent_messages WHERE session_id = ?').get<{ n: number }>(sessionId)?.n;
    assert.equal(count('imported'), 0);
    assert.equal(count('kept'), 3);
  });

  it(`stops restarting after ${MAX_WORKER_RESTARTS_IN_A_ROW} stops in a row, counting only stops with no answer between`, async () => {
    const path = folder.path('again.db');
    // Stops with an answered request between them do not add up.
    for (let i = 0; i < MAX_WORKER_RESTARTS_IN_A_ROW + 1; i++) {
      await crashImport(path);
      const db = await client.openDatabase(path, { readonly: false });
      await db.listSessions();
      await db.close();
    }
    for (let i = 0; i < MAX_WORKER_RESTARTS_IN_A_ROW; i++) await crashImport(path);
    const sent = client.requestsSent;
    await assert.rejects(
      client.openDatabase(path),
      (err: unknown) =>
        stopped(true)(err) &&
        new RegExp(`stopped ${MAX_WORKER_RESTARTS_IN_A_ROW} times in a row \\(last: exit code 70\\)`).test((err as Error).message),
    );
    assert.equal(client.requestsSent, sent, 'no worker was started for it');
  });
});
