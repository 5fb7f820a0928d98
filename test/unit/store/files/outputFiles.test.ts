/**
 * Files we write never land on a file we read, never overwrite a file unless told to, never go through a link, and
 * their temporary files are unpredictable and never named in a message (issues 38 and 46). On real files, with the
 * driver the phase selects (the store phases run this on node:sqlite too).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, lstatSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { exportDataset } from '../../../../src/store/datasets/datasetExport';
import { exportSessionToFile } from '../../../../src/store/export/sessionExport';
import { importSessionFile } from '../../../../src/store/export/importSession';
import { OutputFileError } from '../../../../src/store/files/outputFileError';
import { checkOutputPath } from '../../../../src/store/files/outputGuard';
import { TempFile, writeOutputFile } from '../../../../src/store/files/tempFile';
import { ReviewStoreError } from '../../../../src/store/reviews/reviewErrors';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { TraceStore } from '../../../../src/store/traces/traceStore';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { openSessionDatabase } from '../../../../src/store';
import { writeExportFixture } from '../export/exportFixtures';
import { tempDir } from '../../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..', '..');
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const problem = (p: string) => (e: unknown) => e instanceof OutputFileError && e.problem === p;

describe('files we write', () => {
  const tmp = tempDir('asi-outputs-');
  const db = join(tmp.dir, 'd.db');
  const request = { sessionId: 'weather-trip', branchId: 'main' };
  let n = 0;
  const fresh = (name: string) => join(tmp.dir, `${++n}-${name}`);
  /** A copy of the fixture per test, so a writer that destroys its input (before the fix) fails only its own test. */
  const copyDb = () => {
    const path = fresh('d.db');
    copyFileSync(db, path);
    return path;
  };

  before(async () => {
    await writeExportFixture(db);
  });
  after(() => tmp.cleanup());

  describe('never onto an input', () => {
    it('refuses the session file itself, by any spelling, even with overwrite; the file is unchanged', async () => {
      const db = copyDb();
      const before = sha(db);
      const spellings = [db, relative(process.cwd(), db), join(dirname(db), '.', basename(db))];
      for (const out of spellings) {
        await assert.rejects(exportSessionToFile(db, out, 'jsonl', request, { overwrite: true }), problem('is-input'), out);
      }
      assert.equal(sha(db), before);
      assert.equal(openSessionDatabase(db, { readonly: true }).listSessions().length > 0, true, 'still a session database');
    });

    it('refuses a symbolic link to it, a hard link of it and its -wal/-shm/-journal paths', async () => {
      const db = copyDb();
      const before = sha(db);
      const symlink = fresh('link.db');
      symlinkSync(db, symlink);
      const hardLink = fresh('hard.db');
      linkSync(db, hardLink);
      for (const out of [symlink, hardLink, `${db}-wal`, `${db}-shm`, `${db}-journal`]) {
        await assert.rejects(exportSessionToFile(db, out, 'jsonl', request, { overwrite: true }), problem('is-input'), out);
      }
      // And the other way round: the session file read through a link, the output the real file.
      await assert.rejects(exportSessionToFile(symlink, db, 'jsonl', request, { overwrite: true }), problem('is-input'));
      assert.equal(sha(db), before);
      assert.equal(lstatSync(symlink).isSymbolicLink(), true);
    });

    it('refuses the review store a dataset reads (and its hard link), as the output of a dataset', async () => {
      const db = copyDb();
      const reviewsPath = fresh('d.db.reviews.db');
      const reviews = ReviewStore.open(reviewsPath);
      const data = reviews.exportData();
      reviews.close();
      const before = sha(reviewsPath);
      const hardLink = fresh('reviews-hard.db');
      linkSync(reviewsPath, hardLink);
      const reader = openSessionDatabase(db, { readonly: true });
      try {
        for (const out of [reviewsPath, hardLink, db]) {
          await assert.rejects(
            exportDataset(reader, data, out, { format: 'sft', overwrite: true, inputs: [db, reviewsPath] }),
            problem('is-input'),
            out,
          );
        }
      } finally {
        reader.close();
      }
      assert.equal(sha(reviewsPath), before);
    });

    it('import never writes into the file it imports', async () => {
      const db = copyDb();
      const out = fresh('export.json');
      await exportSessionToFile(db, out, 'json', request);
      const before = sha(out);
      await assert.rejects(importSessionFile(out, out, { sessionId: 'x', createTables: true }), problem('is-input'));
      assert.equal(sha(out), before);
    });
  });

  describe('an existing file', () => {
    it('is refused without overwrite, byte for byte as it was; replaced with it', async () => {
      const db = copyDb();
      const out = fresh('out.jsonl');
      writeFileSync(out, 'mine\n');
      await assert.rejects(exportSessionToFile(db, out, 'jsonl', request), problem('exists'));
      assert.equal(readFileSync(out, 'utf8'), 'mine\n');
      await exportSessionToFile(db, out, 'jsonl', request, { overwrite: true });
      assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, 16);
      assert.deepEqual(
        readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp')),
        [],
        'no temporary file left',
      );
    });

    it('a file that appears while the output is written is not replaced', () => {
      const out = fresh('race.json');
      const temp = TempFile.create(out);
      temp.write('ours');
      writeFileSync(out, 'theirs');
      assert.throws(() => temp.commit(), problem('exists'));
      assert.equal(readFileSync(out, 'utf8'), 'theirs');
      assert.equal(existsSync(temp.path), false);
    });

    it('a folder is not a file', () => {
      assert.throws(() => checkOutputPath(tmp.dir, { overwrite: true }), problem('not-a-file'));
    });

    it('a write the disk cuts short fails, nothing put in place and a file it would replace kept (a file size limit)', () => {
      // `ulimit -f` makes the kernel write only what fits and fail the next write (EFBIG): what a disk filling up does
      // (ENOSPC), without root. Node ignores SIGXFSZ, so the error reaches the writer.
      const tempFile = join(ROOT, 'src', 'store', 'files', 'tempFile.ts');
      const kept = fresh('kept.txt');
      writeFileSync(kept, 'the old file');
      const script = `
        // From -e, tsx hands the CommonJS-compiled module over as its default export.
        const loaded = await import(${JSON.stringify(tempFile)});
        const { TempFile, writeOutputFile } = loaded.writeOutputFile ? loaded : loaded.default;
        const [whole, copied, source, kept] = process.argv.slice(1);
        const tell = (what, fn) => { try { fn(); console.log(what, 'written'); } catch (e) { console.log(what, e.name, e.problem); } };
        tell('whole', () => writeOutputFile(whole, 'x'.repeat(300000)));
        tell('copied', () => { const t = TempFile.create(copied); try { t.copyFrom(source); t.commit(); } catch (e) { t.discard(); throw e; } });
        tell('kept', () => writeOutputFile(kept, 'y'.repeat(300000), { overwrite: true }));
      `;
      const source = fresh('source.bin');
      writeFileSync(source, Buffer.alloc(300000, 1));
      const [whole, copied] = [fresh('whole.txt'), fresh('copied.bin')];
      const r = spawnSync(
        'bash',
        [
          '-c',
          'ulimit -f 64 && exec "$0" --import tsx --input-type=module -e "$1" -- "${@:2}"',
          process.execPath,
          script,
          whole,
          copied,
          source,
          kept,
        ],
        {
          cwd: ROOT,
          encoding: 'utf8',
        },
      );
      assert.equal(r.stdout, 'whole OutputFileError io\ncopied OutputFileError io\nkept OutputFileError io\n', r.stderr);
      assert.equal(existsSync(whole) || existsSync(copied), false, 'nothing cut short put in place');
      assert.equal(readFileSync(kept, 'utf8'), 'the old file');
      assert.deepEqual(
        readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp')),
        [],
        'no temporary file left',
      );
    });

    it('a name near the 255-byte limit is written (its temporary file takes a shorter form of it)', () => {
      for (const name of [`${'a'.repeat(250)}.json`, `${'é'.repeat(125)}.json`]) {
        const out = join(tmp.dir, name);
        writeOutputFile(out, 'data');
        assert.equal(readFileSync(out, 'utf8'), 'data', name);
      }
    });

    it('a pipe, a link to one and an empty name are no output, even to replace: each stays as it was', () => {
      // A pipe stands for every non-file (a device: /dev/null, replaced by a file, was how this was found).
      const pipe = fresh('pipe');
      assert.equal(spawnSync('mkfifo', [pipe]).status, 0, 'mkfifo');
      const link = fresh('link-to-pipe');
      symlinkSync(pipe, link);
      for (const out of [pipe, link]) {
        assert.throws(() => writeOutputFile(out, 'data', { overwrite: true }), problem('not-a-file'), out);
        assert.equal(lstatSync(pipe).isFIFO(), true, out);
      }
      assert.equal(lstatSync(link).isSymbolicLink(), true);
      for (const empty of ['', ' ']) assert.throws(() => checkOutputPath(empty, { overwrite: true }), problem('not-a-file'));
    });
  });

  describe('links and temporary files', () => {
    it('a dangling link at the output: refused without overwrite, replaced (not followed) with it', () => {
      const outside = fresh('outside.txt');
      const out = fresh('out.json');
      symlinkSync(outside, out);
      assert.throws(() => writeOutputFile(out, 'data'), problem('exists'));
      writeOutputFile(out, 'data', { overwrite: true });
      assert.equal(existsSync(outside), false, 'nothing created where the link pointed');
      assert.equal(lstatSync(out).isFile(), true);
      assert.equal(readFileSync(out, 'utf8'), 'data');
    });

    it("the temporary file's name is random and never written through a link planted at a guessable name", async () => {
      const db = copyDb();
      const out = fresh('planted.jsonl');
      const outside = fresh('victim');
      const base = out.slice(tmp.dir.length + 1);
      // Every name the old writers used: `<out>.<pid>.partial`, `<out>.partial-<pid>`, `.<out>.<pid>.partial`.
      for (const name of [`${base}.${process.pid}.partial`, `${base}.partial-${process.pid}`, `.${base}.${process.pid}.partial`]) {
        symlinkSync(outside, join(tmp.dir, name));
      }
      await exportSessionToFile(db, out, 'jsonl', request);
      const reviews = ReviewStore.open(fresh('r.db'));
      const data = reviews.exportData();
      reviews.close();
      const reader = openSessionDatabase(db, { readonly: true });
      try {
        await exportDataset(reader, data, out, { format: 'sft', overwrite: true });
      } finally {
        reader.close();
      }
      assert.equal(existsSync(outside), false, 'nothing written through a planted link');
      const a = TempFile.create(fresh('x'));
      const b = TempFile.create(fresh('x'));
      assert.notEqual(a.path.slice(-20), b.path.slice(-20));
      assert.equal(lstatSync(a.path).mode & 0o777, 0o600, 'only the owner can read it while it is written');
      a.discard();
      b.discard();
    });

    it('a write error names the output the caller gave, not the temporary file', async () => {
      const db = copyDb();
      const out = join(tmp.dir, 'no-such-folder', 'out.jsonl');
      await assert.rejects(exportSessionToFile(db, out, 'jsonl', request), (e: unknown) => {
        assert.ok(e instanceof OutputFileError && e.problem === 'io', String(e));
        assert.match(e.message, new RegExp(`^${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be written \\(ENOENT`));
        assert.doesNotMatch(e.message, /partial|\.tmp/);
        return true;
      });
    });
  });

  describe('our own stores', () => {
    it('a dangling link where a review or trace store would be created: refused, nothing created outside', () => {
      const outside = fresh('outside.db');
      const reviewsPath = `${db}.reviews.db`;
      symlinkSync(outside, reviewsPath);
      try {
        assert.throws(() => ReviewStore.open(reviewsPath), problem('symlink'));
        assert.equal(existsSync(outside), false);
        const traces = fresh('traces.db');
        const outsideTraces = fresh('outside-traces.db');
        symlinkSync(outsideTraces, traces);
        assert.throws(() => TraceStore.open(traces), problem('symlink'));
        assert.equal(existsSync(outsideTraces), false);
      } finally {
        // The link beside the shared fixture would change other tests' stores.
        rmSync(reviewsPath);
      }
    });

    it("a link to another program's SQLite database, or a link at its -wal: refused, the database's bytes identical", () => {
      const foreign = fresh('other-program.db');
      const other = openDatabase(foreign, {});
      other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me')");
      other.close();
      const before = sha(foreign);
      const link = fresh('reviews.db');
      symlinkSync(foreign, link);
      assert.throws(() => ReviewStore.open(link), problem('symlink'));
      const walLinked = fresh('reviews2.db');
      symlinkSync(fresh('elsewhere-wal'), `${walLinked}-wal`);
      assert.throws(() => ReviewStore.open(walLinked), problem('symlink'));
      assert.equal(existsSync(walLinked), false);
      assert.equal(sha(foreign), before);
      assert.equal(existsSync(`${foreign}-wal`), false);
    });

    it("another program's database at the path itself: refused before WAL mode or anything else is written", () => {
      const foreign = fresh('their.db');
      const other = openDatabase(foreign, {});
      other.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
      other.close();
      const before = sha(foreign);
      assert.throws(
        () => ReviewStore.open(foreign),
        (e: unknown) => e instanceof ReviewStoreError && e.problem === 'not-review-store',
      );
      assert.throws(() => TraceStore.open(foreign));
      assert.equal(sha(foreign), before, 'still in its own journal mode, byte for byte');
    });

    it('a new store is still created (a regular file) and opens again', () => {
      const path = fresh('new.reviews.db');
      ReviewStore.open(path).close();
      assert.equal(lstatSync(path).isFile(), true);
      ReviewStore.open(path).close();
      TraceStore.open(fresh('new.traces.db')).close();
    });
  });
});
