/**
 * The search worker kept for the next search (searchInWorker.ts): searches one after another share a thread and give
 * what a new worker gives; a late cancel never reaches the next search; searches at the same time, other bundles or
 * options get workers of their own; a kept worker ends after its time, holding no file open while it waits, but the
 * files of searches held open elsewhere (`keepOpen`), until the host releases them or ends it.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  endKeptSearchWorker,
  keptSearchWorker,
  releaseSearchFiles,
  startWorkerSearch,
  type WorkerSearch,
} from '../../../../src/store/search/searchInWorker';
import { parseSearchQuery, type SearchHit } from '../../../../src/store';
import { TempFolder } from '../inspector/inspectorFixtures';
import { openDescriptors } from '../../../support/openDescriptors';

const ROOT = join(__dirname, '..', '..', '..', '..');
const WORKER = join(ROOT, 'src', 'store', 'search', 'searchWorker.ts');
const UNDER_TSX = ['--require', 'tsx/cjs'];

describe('the search worker kept for the next search', function () {
  // A new worker under tsx compiles the sources: seconds each when the suite runs beside another phase.
  this.timeout(90_000);
  let folder: TempFolder;
  let path: string;
  beforeEach(async () => {
    await endKeptSearchWorker();
    folder = new TempFolder();
    path = folder.path('many.db');
    const s = folder.session({ dbPath: path, sessionId: 'many' });
    for (let t = 0; t < 30; t++)
      await s.addItems(Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: `needle ${t}.${i}` })) as never);
    s.close();
  });
  afterEach(async () => {
    await endKeptSearchWorker();
    folder.cleanup();
  });

  const search = (
    query: string,
    { keepOpen, ...options }: { keptMs?: number; execArgv?: string[]; keepOpen?: boolean } = {},
  ): { worker: WorkerSearch; hits: SearchHit[]; done: Promise<SearchHit[]> } => {
    const hits: SearchHit[] = [];
    const worker = startWorkerSearch(
      WORKER,
      { paths: [path], query: parseSearchQuery(query), ...(keepOpen === undefined ? {} : { keepOpen }) },
      { onHits: (_p, h) => hits.push(...h) },
      { execArgv: UNDER_TSX, ...options },
    );
    const done = Promise.all([worker.finished, worker.exited]).then(([end]) => {
      assert.deepEqual(end, { cancelled: false, capped: false, notSearched: [] });
      return hits;
    });
    return { worker, hits, done };
  };
  const ids = (hits: SearchHit[]): number[] => hits.map((h) => h.messageId);

  it('runs the next search in the same thread, with the hits a new worker gives', async () => {
    const first = search('needle 7.');
    const firstHits = await first.done;
    assert.equal(firstHits.length, 100);
    assert.equal(keptSearchWorker(), first.worker.threadId, 'kept after its search');
    const second = search('needle 7.');
    assert.equal(second.worker.threadId, first.worker.threadId);
    assert.equal(keptSearchWorker(), undefined, 'taken by the second search');
    assert.deepEqual(ids(await second.done), ids(firstHits));
    const third = search('needle 12.42');
    assert.equal(third.worker.threadId, first.worker.threadId);
    assert.deepEqual(
      (await third.done).map((h) => h.snippet.text),
      ['needle 12.42'],
    );
    // The control: a worker of its own, never kept (keptMs 0), gives the same hits.
    await endKeptSearchWorker();
    const fresh = search('needle 7.', { keptMs: 0 });
    assert.notEqual(fresh.worker.threadId, first.worker.threadId);
    assert.deepEqual(ids(await fresh.done), ids(firstHits));
    assert.equal(keptSearchWorker(), undefined, 'keptMs 0: the worker ended after its search');
  });

  it('never lets a late cancel of an ended search stop the next one in the same thread', async () => {
    const first = search('needle');
    assert.equal((await first.done).length, 3000);
    const second = search('needle');
    assert.equal(second.worker.threadId, first.worker.threadId);
    // The first search's owner cancels it late (it had ended): the message reaches the thread the second one runs in.
    first.worker.cancel();
    assert.equal((await second.done).length, 3000);
    // Its own cancel still stops it (asked before its first batch is out, as the worker test of a new thread does).
    const third = startWorkerSearch(
      WORKER,
      { paths: [path], query: parseSearchQuery('needle') },
      { onHits: () => undefined },
      { execArgv: UNDER_TSX },
    );
    assert.equal(third.threadId, first.worker.threadId);
    third.cancel();
    assert.equal((await third.finished).cancelled, true);
    await third.exited;
  });

  it('gives searches at the same time, and other options, workers of their own', async () => {
    await search('needle 1.').done;
    const kept = keptSearchWorker();
    const a = search('needle 2.');
    const b = search('needle 3.');
    assert.equal(a.worker.threadId, kept, 'the first takes the kept worker');
    assert.notEqual(b.worker.threadId, kept, 'the second, while it runs, a new one');
    const [hitsA, hitsB] = await Promise.all([a.done, b.done]);
    assert.equal(hitsA.length, 100);
    assert.equal(hitsB.length, 100);
    // One is kept (the one that ended last), the other ended.
    assert.ok([a.worker.threadId, b.worker.threadId].includes(keptSearchWorker()!));
    const other = search('needle 4.', { execArgv: [...UNDER_TSX, '--no-warnings'] });
    assert.ok(![a.worker.threadId, b.worker.threadId].includes(other.worker.threadId), 'other options: a new worker');
    assert.equal((await other.done).length, 100);
  });

  it('ends the kept worker when asked, in a process with nothing else to do (the extension deactivating)', () => {
    // A kept worker does not keep the process alive; while it ends, it must, or whoever awaits its end (VS Code awaits
    // deactivate) would see the process end first: here, nothing after the await would be printed.
    const script = join(folder.dir, 'end.mts');
    writeFileSync(
      script,
      `import { endKeptSearchWorker, keptSearchWorker, startWorkerSearch } from ${JSON.stringify(join(ROOT, 'src', 'store', 'search', 'searchInWorker.ts'))};
import { parseSearchQuery } from ${JSON.stringify(join(ROOT, 'src', 'store', 'search', 'searchQuery.ts'))};
const search = startWorkerSearch(${JSON.stringify(WORKER)}, { paths: [${JSON.stringify(path)}], query: parseSearchQuery('needle 3.') },
  { onHits: () => undefined }, { execArgv: ${JSON.stringify(UNDER_TSX)} });
await search.finished;
await search.exited;
process.stdout.write(keptSearchWorker() === search.threadId ? 'kept, ' : 'not kept, ');
await endKeptSearchWorker();
process.stdout.write(keptSearchWorker() === undefined ? 'ended' : 'still kept');
`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'kept, ended');
  });

  it('ends a kept worker after its time, and holds no file open while it waits', async () => {
    const first = search('needle 5.', { keptMs: 300 });
    await first.done;
    assert.equal(keptSearchWorker(), first.worker.threadId);
    // No connection left open while it waits: no descriptor of this process (its threads share them) names the file.
    assert.deepEqual(openDescriptors(path), [], 'the kept worker holds the file open');
    for (let i = 0; i < 100 && keptSearchWorker() !== undefined; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(keptSearchWorker(), undefined, 'ended after keptMs');
    const next = search('needle 5.');
    assert.notEqual(next.worker.threadId, first.worker.threadId);
    assert.equal((await next.done).length, 100);
  });

  it('keeps the files of searches held open elsewhere for the next search, until they are released or it ends', async () => {
    const waitClosed = async (what: string): Promise<void> => {
      for (let i = 0; i < 100 && openDescriptors(path).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(openDescriptors(path), [], what);
    };
    const first = search('needle 5.', { keepOpen: true });
    assert.equal((await first.done).length, 100);
    assert.notDeepEqual(openDescriptors(path), [], 'kept open while the worker waits');
    // Another file moved over the path meanwhile: the next search reads it, not the kept connection's file.
    const other = folder.path('other.db');
    const writer = folder.session({ dbPath: other, sessionId: 'many' });
    await writer.addItems(Array.from({ length: 7 }, (_, i) => ({ role: 'user', content: `needle 5.${i} again` })) as never);
    writer.close();
    renameSync(other, path);
    const second = search('needle 5.', { keepOpen: true });
    assert.equal(second.worker.threadId, first.worker.threadId);
    assert.deepEqual(
      (await second.done).map((h) => h.snippet.text),
      Array.from({ length: 7 }, (_, i) => `needle 5.${i} again`),
    );
    assert.notDeepEqual(openDescriptors(path), [], 'the new file kept open');
    // The extension closed the database: the waiting worker lets it go at once.
    releaseSearchFiles((p) => p === path);
    await waitClosed('released');
    // Released while a search runs: once it is over.
    const third = search('needle', { keepOpen: true });
    releaseSearchFiles((p) => p === path);
    assert.equal((await third.done).length, 7);
    await waitClosed('released after the search');
    assert.equal(keptSearchWorker(), first.worker.threadId);
    // A worker that ends closes what it kept.
    await search('needle', { keepOpen: true }).done;
    assert.notDeepEqual(openDescriptors(path), []);
    await endKeptSearchWorker();
    assert.deepEqual(openDescriptors(path), [], 'closed as the worker ended');
  });
});
