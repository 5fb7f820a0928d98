/**
 * The workers as the extension starts them (issue 43): the bundles esbuild.mjs builds (`storeWorker.js`, the loader of
 * src/store/worker/storeWorkerLoader.ts, and `storeWorkerMain.js`, the worker; the search worker's likewise), with and
 * without a code cache folder (src/store/files/codeCache.ts, `loadWorkerMain`). With one, the first worker writes V8's cache of the worker there and the next one runs from it (V8 refusing
 * it would delete the file and a new one would be written: the test sees the same file); a damaged cache only costs
 * the compile and is replaced at the next start; without one nothing is written. Every worker answers as the source worker does.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { parseSearchQuery, startWorkerSearch } from '../../../../src/store';
import { StoreClient } from '../../../../src/store/worker/storeClient';
import { TempFolder, mk } from '../inspector/inspectorFixtures';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** Waits until `check` holds (the cache is written on the worker's own timer). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('the workers loaded through their code cache', function () {
  this.timeout(120_000);
  let out: string;
  let folder: TempFolder;
  const clients: StoreClient[] = [];

  before(async () => {
    // Inside node_modules: the bundle requires better-sqlite3, which resolves from there as it does from dist/.
    const base = join(ROOT, 'node_modules', '.cache', 'agent-session-inspector');
    mkdirSync(base, { recursive: true });
    out = mkdtempSync(join(base, 'worker-test-'));
    const esbuild = await import('esbuild');
    const build = (await import(pathToFileURL(join(ROOT, 'scripts', 'extensionBuild.mjs')).href)) as Record<
      'storeWorkerBuildOptions' | 'searchWorkerBuildOptions',
      (o: { production: boolean; outdir: string }) => BuildOptions[]
    >;
    const options = [
      ...build.storeWorkerBuildOptions({ production: true, outdir: out }),
      ...build.searchWorkerBuildOptions({ production: true, outdir: out }),
    ];
    await Promise.all(options.map((o) => esbuild.build({ ...o, logLevel: 'silent' })));
  });
  after(() => rmSync(out, { recursive: true, force: true }));
  beforeEach(() => {
    folder = new TempFolder();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
    folder.cleanup();
  });

  async function writeSession(): Promise<string> {
    const s = folder.session({ sessionId: 'trip' });
    await s.addItems([mk.user('question'), mk.call('lookup', 'c1'), mk.output('c1'), mk.assistant('answer')]);
    s.close();
    return folder.path();
  }

  async function sessionsThrough(options: ConstructorParameters<typeof StoreClient>[1], path: string): Promise<unknown> {
    const client = new StoreClient(join(out, 'storeWorker.js'), options);
    clients.push(client);
    const db = await client.openDatabase(path);
    return await db.listSessions();
  }

  const cacheFiles = (dir: string, bundle = 'storeWorkerMain'): string[] => {
    try {
      return readdirSync(dir).filter((f) => f.startsWith(`${bundle}-`) && f.endsWith('.bin'));
    } catch {
      return [];
    }
  };

  it('writes the cache once, and the next worker runs from it with the same answers', async () => {
    const path = await writeSession();
    const cacheDir = join(folder.dir, 'code-cache');
    const first = await sessionsThrough({ codeCacheDir: cacheDir, codeCacheWriteAfterMs: 0 }, path);
    await until(() => cacheFiles(cacheDir).length === 1, 'the code cache file');
    const [name] = cacheFiles(cacheDir);
    const file = join(cacheDir, name!);
    const before = { ino: statSync(file).ino, bytes: readFileSync(file) };
    assert.ok(before.bytes.length > 1000, `a cache of ${before.bytes.length} bytes`);

    const second = await sessionsThrough({ codeCacheDir: cacheDir, codeCacheWriteAfterMs: 0 }, path);
    assert.deepEqual(second, first);
    // Give a refusal's rewrite (delete, then write after 0 ms) the time it would take.
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(cacheFiles(cacheDir), [name], 'the cache was refused and written again');
    assert.equal(statSync(file).ino, before.ino);
    assert.ok(readFileSync(file).equals(before.bytes));

    const fromSource = await sessionsThrough({}, path);
    assert.deepEqual(fromSource, first);
  });

  it('answers from a damaged cache, which the next start replaces, and writes nothing without a folder', async () => {
    const path = await writeSession();
    const cacheDir = join(folder.dir, 'code-cache');
    const first = await sessionsThrough({ codeCacheDir: cacheDir, codeCacheWriteAfterMs: 0 }, path);
    await until(() => cacheFiles(cacheDir).length === 1, 'the code cache file');
    const file = join(cacheDir, cacheFiles(cacheDir)[0]!);
    const damaged = readFileSync(file);
    damaged[damaged.length >> 1]! ^= 0xff;
    writeFileSync(file, damaged);

    // Its checksum fails: deleted, and the next start writes a new one (src/store/files/codeCache.ts).
    assert.deepEqual(await sessionsThrough({ codeCacheDir: cacheDir, codeCacheWriteAfterMs: 0 }, path), first);
    await until(() => cacheFiles(cacheDir).length === 0, 'the damaged cache deleted');
    assert.deepEqual(await sessionsThrough({ codeCacheDir: cacheDir, codeCacheWriteAfterMs: 0 }, path), first);
    await until(() => cacheFiles(cacheDir).length === 1, 'a new cache');
    assert.ok(!readFileSync(file).equals(damaged));

    assert.deepEqual(await sessionsThrough({}, path), first);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      readdirSync(out).filter((f) => f.endsWith('.bin')),
      [],
      'a worker without a cache folder wrote a cache beside its bundle',
    );
  });
  it('runs a search worker from its cache with the same hits as without', async () => {
    const path = await writeSession();
    const cacheDir = join(folder.dir, 'code-cache');
    const search = async (codeCacheDir: string | undefined): Promise<unknown[]> => {
      const hits: unknown[] = [];
      const s = startWorkerSearch(
        join(out, 'searchWorker.js'),
        { paths: [path], query: parseSearchQuery('answer') },
        { onHits: (_p, h) => hits.push(...h) },
        // A delay no search here lasts: the worker ends first and writes its cache as it ends (with the default delay,
        // 5 s, and the timer not keeping it alive, a search worker used to end without writing one). Not kept for the
        // next search (keptMs 0): each search here starts its own worker, from the cache or not.
        codeCacheDir === undefined ? { keptMs: 0 } : { codeCacheDir, codeCacheWriteAfterMs: 60_000, keptMs: 0 },
      );
      const end = await s.finished;
      assert.equal(end.error, undefined);
      return hits;
    };
    const first = await search(cacheDir);
    assert.equal(first.length, 1);
    await until(() => cacheFiles(cacheDir, 'searchWorkerMain').length === 1, "the search worker's cache");
    const file = join(cacheDir, cacheFiles(cacheDir, 'searchWorkerMain')[0]!);
    const ino = statSync(file).ino;
    assert.deepEqual(await search(cacheDir), first);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(statSync(file).ino, ino, 'the cache was refused and written again');
    assert.deepEqual(await search(undefined), first);
  });
});
