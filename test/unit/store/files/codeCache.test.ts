/**
 * The extension loaded through V8's code cache (src/store/files/codeCache.ts, issue 43): the first load compiles and
 * writes the cache, the next uses it; a damaged or foreign cache is refused and deleted, never read into V8; a new
 * build writes its own and removes the old; a storage that cannot be written costs only the compile. The bundle loads
 * as `require` would load it: its own module, requests resolved beside it.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadWithCodeCache, loadWithCodeCacheAsync } from '../../../../src/store/files/codeCache';
import { tempDir } from '../../../support/tempFiles';

/** A bundle big enough for V8 to keep code for, requiring a file beside it. */
function writeBundle(dir: string, version: number): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'dep.js'), `module.exports = { answer: 42 };\n`);
  const functions = Array.from({ length: 200 }, (_, i) => `function f${i}(x) { return x * ${i} + ${version}; }`).join('\n');
  const file = join(dir, 'main.js');
  writeFileSync(
    file,
    `${functions}\nconst dep = require('./dep.js');\nexports.version = ${version};\nexports.sum = () => f199(1) + dep.answer;\nexports.names = { filename: __filename, dirname: __dirname, self: module.filename, cached: require.cache[__filename] === module };\nexports.dynamic = async () => (await import('node:path')).basename('/a/b.mjs');\n`,
  );
  return file;
}

const CODE_CACHE = join(__dirname, '../../../../src/store/files/codeCache.ts');

/**
 * A load in a process of its own: V8 keeps what it compiled for a source within a process and would not even read the
 * cache for one it has seen, so whether it uses or refuses a cache shows only in a fresh process.
 */
function loadInChild(file: string, cacheDir: string, how: 'sync' | 'async' = 'sync'): { cache: string; version: number } {
  const load = how === 'sync' ? 'loadWithCodeCache' : 'loadWithCodeCacheAsync';
  // The cache is written on an unref'd timer, which an asynchronous load sets after the loop's last I/O: the process
  // is kept until it has been written, as the extension host is.
  const script = `const { ${load} } = require(${JSON.stringify(CODE_CACHE)}); const keep = setInterval(() => {}, 1000);
Promise.resolve(${load}(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)}, { writeAfter: 0 })).then((l) =>
  l.written.then(() => { console.log(JSON.stringify({ cache: l.cache, version: l.exports.version })); clearInterval(keep); }));`;
  const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { cache: string; version: number };
}

describe('loading the extension through V8 code cache', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-code-cache-');
  after(() => tmp.cleanup());

  it('compiles and writes the cache on the first load, uses it on the next; the bundle runs as require would run it', async () => {
    const dir = join(tmp.dir, 'a');
    const file = writeBundle(join(dir, 'dist'), 1);
    const cacheDir = join(dir, 'storage', 'code-cache');
    const first = loadWithCodeCache(file, cacheDir, { writeAfter: 0 });
    assert.equal(first.cache, 'missing');
    await first.written;
    assert.ok(existsSync(first.cacheFile), 'no cache written');
    const exports = first.exports as { version: number; sum(): number; names: Record<string, unknown> };
    assert.equal(exports.sum(), 199 + 1 + 42);
    assert.deepEqual(exports.names, { filename: file, dirname: join(dir, 'dist'), self: file, cached: true });

    // import() in the bundle works as in a module Node loaded (a built-in here; an ES module agent in the extension).
    assert.equal(await (first.exports as { dynamic(): Promise<string> }).dynamic(), 'b.mjs');

    const second = loadWithCodeCache(file, cacheDir, { writeAfter: 0 });
    assert.equal(second.cache, 'used');
    assert.equal(await (second.exports as { dynamic(): Promise<string> }).dynamic(), 'b.mjs');
    assert.equal(second.cacheFile, first.cacheFile);
    assert.equal((second.exports as { sum(): number }).sum(), 242);
    // In a process that has not compiled it: V8 takes the data.
    assert.deepEqual(loadInChild(file, cacheDir), { cache: 'used', version: 1 });
  });

  it('refuses and deletes a damaged cache before V8 reads it, and a cache V8 refuses', async () => {
    const dir = join(tmp.dir, 'b');
    const file = writeBundle(join(dir, 'dist'), 2);
    const cacheDir = join(dir, 'code-cache');
    const first = loadWithCodeCache(file, cacheDir, { writeAfter: 0 });
    await first.written;
    const good = readFileSync(first.cacheFile);

    // One byte of the data changed: the checksum catches it (V8 checks only the header).
    const damaged = Buffer.from(good);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 100) ^ 0xff, damaged.length - 100);
    writeFileSync(first.cacheFile, damaged);
    const again = loadWithCodeCache(file, cacheDir, { writeAfter: 0 });
    assert.equal(again.cache, 'refused');
    assert.equal((again.exports as { version: number }).version, 2);
    assert.equal(existsSync(first.cacheFile), false, 'the damaged cache is still there');
    await again.written;
    assert.equal(existsSync(first.cacheFile), false, 'a refused cache was rewritten in place');

    // Data with a right checksum that V8 refuses (not code of this source at all).
    const { createHash } = await import('node:crypto');
    const junk = Buffer.alloc(4096, 7);
    writeFileSync(first.cacheFile, Buffer.concat([createHash('sha256').update(junk).digest(), junk]));
    assert.deepEqual(loadInChild(file, cacheDir), { cache: 'refused', version: 2 });
    assert.equal(existsSync(first.cacheFile), false);

    // The next start writes a fresh one, which the one after uses.
    assert.deepEqual(loadInChild(file, cacheDir), { cache: 'missing', version: 2 });
    assert.deepEqual(loadInChild(file, cacheDir), { cache: 'used', version: 2 });
  });

  it("a new build gets a cache of its own and the old one is removed; the old build's never reaches it", async () => {
    const dir = join(tmp.dir, 'c');
    const cacheDir = join(dir, 'code-cache');
    const v1 = loadWithCodeCache(writeBundle(join(dir, 'dist'), 3), cacheDir, { writeAfter: 0 });
    await v1.written;
    // The same length of text, other code: only the name (a hash of the text) tells the caches apart.
    const v2 = loadWithCodeCache(writeBundle(join(dir, 'dist'), 4), cacheDir, { writeAfter: 0 });
    assert.notEqual(v2.cacheFile, v1.cacheFile);
    assert.equal(v2.cache, 'missing');
    assert.equal((v2.exports as { version: number }).version, 4);
    await v2.written;
    assert.deepEqual(readdirSync(cacheDir), [v2.cacheFile.slice(cacheDir.length + 1)]);
  });

  it('writes the cache again once what ran after it adds code, never for nothing new; V8 takes the grown one', async () => {
    // A bundle whose `later` runs 300 functions the load does not: the first cache lacks their code (V8 keeps only
    // what ran), as a worker's first cache lacks what a window does after its first seconds.
    const bundle = (dir: string, version: number): string => {
      mkdirSync(dir, { recursive: true });
      const fns = Array.from({ length: 300 }, (_, i) => `function g${i}(x) { const y = x + ${i}; return y * y - ${version}; }`);
      const file = join(dir, 'main.js');
      writeFileSync(
        file,
        `${fns.join('\n')}\nexports.version = ${version};\nexports.later = () => { let t = 0; ${fns.map((_, i) => `t += g${i}(1);`).join(' ')} return t; };\n`,
      );
      return file;
    };
    const sizeOf = (f: string) => readFileSync(f).length;
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const grown = join(tmp.dir, 'g');
    const file = bundle(join(grown, 'dist'), 8);
    const cacheDir = join(grown, 'code-cache');
    const load = loadWithCodeCache(file, cacheDir, { writeAfter: 0, growAfter: [400, 800] });
    await load.written;
    const first = sizeOf(load.cacheFile);
    await wait(550);
    assert.equal(sizeOf(load.cacheFile), first, 'rewritten with nothing new compiled');
    assert.ok((load.exports as { later(): number }).later() > 0);
    await wait(500);
    const second = sizeOf(load.cacheFile);
    assert.ok(second >= first + 8 * 1024, `the cache did not grow with what ran later: ${first} → ${second} bytes`);
    assert.deepEqual(loadInChild(file, cacheDir), { cache: 'used', version: 8 });

    // A load that took the first (smaller) cache and grew less than what is on disk now leaves the bigger one.
    const small = join(tmp.dir, 'g2');
    const file2 = bundle(join(small, 'dist'), 10);
    const dir2 = join(small, 'code-cache');
    const writer = loadWithCodeCache(file2, dir2, { writeAfter: 0, growAfter: [300] });
    await writer.written;
    (writer.exports as { later(): number }).later();
    const big = Buffer.from(readFileSync(writer.cacheFile));
    // What a window that grew further wrote meanwhile (the same data with more after it: only its size is read).
    writeFileSync(writer.cacheFile, Buffer.concat([big, Buffer.alloc(64 * 1024)]));
    await wait(450);
    assert.equal(sizeOf(writer.cacheFile), big.length + 64 * 1024, 'a bigger cache on disk was replaced by a smaller one');

    // Without growAfter (the extension host's own bundle: a bigger cache is more to read at activation), it stays.
    const still = join(tmp.dir, 'h');
    const other = loadWithCodeCache(bundle(join(still, 'dist'), 9), join(still, 'code-cache'), { writeAfter: 0 });
    await other.written;
    const before = sizeOf(other.cacheFile);
    (other.exports as { later(): number }).later();
    await wait(300);
    assert.equal(sizeOf(other.cacheFile), before);
  });

  it("keeps a cache per variant of one build (the CLI's commands) and removes them all for a new build", async () => {
    const dir = join(tmp.dir, 'v');
    const cacheDir = join(dir, 'code-cache');
    const file = writeBundle(join(dir, 'dist'), 6);
    const run = loadWithCodeCache(file, cacheDir, { writeAfter: 0, variant: 'run' });
    const ls = loadWithCodeCache(file, cacheDir, { writeAfter: 0, variant: 'ls' });
    // Not a plain lowercase word: the shared cache, so no text of a user's names a file.
    const odd = loadWithCodeCache(file, cacheDir, { writeAfter: 0, variant: '../x' });
    await Promise.all([run.written, ls.written, odd.written]);
    assert.equal(new Set([run.cacheFile, ls.cacheFile, odd.cacheFile]).size, 3);
    assert.equal(odd.cacheFile, loadWithCodeCache(file, cacheDir, { writeAfter: 0 }).cacheFile);
    assert.equal(readdirSync(cacheDir).length, 3);
    const next = loadWithCodeCache(writeBundle(join(dir, 'dist'), 7), cacheDir, { writeAfter: 0, variant: 'run' });
    await next.written;
    assert.deepEqual(readdirSync(cacheDir), [next.cacheFile.slice(cacheDir.length + 1)]);
  });

  it('loads asynchronously: nothing of the bundle runs before the call returns; the same cache files, checked the same way', async () => {
    const dir = join(tmp.dir, 'e');
    const file = writeBundle(join(dir, 'dist'), 8);
    const cacheDir = join(dir, 'code-cache');
    const pending = loadWithCodeCacheAsync(file, cacheDir, { writeAfter: 0 });
    // The reading and the checksums are left to libuv's pool: the caller's thread goes on before the bundle runs.
    const ranAtCall = require.cache[file] !== undefined;
    assert.equal(ranAtCall, false, 'the bundle ran before the call returned');
    const first = await pending;
    assert.equal(first.cache, 'missing');
    assert.equal(require.cache[file]?.exports, first.exports);
    assert.equal((first.exports as { sum(): number }).sum(), 199 + 8 + 42);
    await first.written;
    assert.equal(first.cacheFile, loadWithCodeCache(file, cacheDir, { writeAfter: 0 }).cacheFile, "not the synchronous load's cache");
    assert.deepEqual(loadInChild(file, cacheDir, 'async'), { cache: 'used', version: 8 });
    assert.deepEqual(loadInChild(file, cacheDir, 'sync'), { cache: 'used', version: 8 });

    // One byte of the data changed: refused by the checksum before V8 sees it, deleted, written again.
    const damaged = readFileSync(first.cacheFile);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 100) ^ 0xff, damaged.length - 100);
    writeFileSync(first.cacheFile, damaged);
    const again = await loadWithCodeCacheAsync(file, cacheDir, { writeAfter: 0 });
    assert.equal(again.cache, 'refused');
    assert.equal(existsSync(first.cacheFile), false, 'the damaged cache is still there');
    await again.written;
    assert.deepEqual(loadInChild(file, cacheDir, 'async'), { cache: 'missing', version: 8 });
    assert.deepEqual(loadInChild(file, cacheDir, 'async'), { cache: 'used', version: 8 });
  });

  it('loads the bundle when the storage cannot be written (a file where the folder would be)', async () => {
    const dir = join(tmp.dir, 'd');
    const file = writeBundle(join(dir, 'dist'), 5);
    writeFileSync(join(dir, 'code-cache'), 'not a folder');
    const load = loadWithCodeCache(file, join(dir, 'code-cache'), { writeAfter: 0 });
    assert.equal((load.exports as { version: number }).version, 5);
    await load.written;
    assert.equal(readFileSync(join(dir, 'code-cache'), 'utf8'), 'not a folder');
  });
});
