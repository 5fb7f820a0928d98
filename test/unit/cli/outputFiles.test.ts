/**
 * The command line never writes onto a file it reads, replaces an existing -o file only with --force, and names the
 * output (not a temporary file) when the write fails (issues 38 and 46): the real binary, built as the package's bin,
 * on real files, exit code 6 each time a write is refused.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../src/store';
import { contentKey } from '../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../src/store/reviews/reviewStore';
import { TraceStore } from '../../../src/store/traces/traceStore';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('agent-sessions: the files it writes', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-out-');
  const cli = sharedCliPath();
  /** The session file and its review store beside it, as the repro names them. */
  const master = join(tmp.dir, 'master.db');
  let n = 0;

  before(async () => {
    await buildSharedCli();
    const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: master, createTables: true });
    await s.addItems([{ role: 'user', content: 'Weather in Oslo?' }, { role: 'assistant', content: 'Rain, 7 °C.' } as never]);
    s.close();
    const r = ReviewStore.open(`${master}.reviews.db`);
    r.setTurnReview(
      { sessionId: 'trip', branchId: 'main', turn: 1, turnKey: contentKey({ role: 'user', content: 'Weather in Oslo?' }) },
      { verdict: 'good' },
    );
    r.close();
  });
  after(() => tmp.cleanup());

  /** A fresh copy of the session file and its review store in a folder of its own. */
  function files(): { dir: string; db: string; reviews: string } {
    const dir = join(tmp.dir, `case${++n}`);
    mkdirSync(dir);
    const db = join(dir, 'd.db');
    copyFileSync(master, db);
    copyFileSync(`${master}.reviews.db`, `${db}.reviews.db`);
    return { dir, db, reviews: `${db}.reviews.db` };
  }

  function run(args: string[], cwd = tmp.dir): Result {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '', PAGER: 'cat', AGENT_SESSIONS_DB: '' },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  const refused = (r: Result, pattern: RegExp) => {
    assert.equal(r.code, 6, `exit ${r.code}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
  };

  it('dataset -o the session file or the review store it reads: exit 6, both byte for byte as they were, even with --force', () => {
    const { dir, db, reviews } = files();
    const before = [sha(db), sha(reviews)];
    // The repro, relative paths and all.
    refused(
      run(['dataset', 'sft', 'd.db', '--store', 'd.db.reviews.db', '-o', 'd.db'], dir),
      /^agent-sessions: Writing d\.db would destroy d\.db, which this command reads/,
    );
    refused(
      run(['dataset', 'sft', 'd.db', '--store', 'd.db.reviews.db', '-o', 'd.db.reviews.db', '--force'], dir),
      /which this command reads/,
    );
    refused(run(['dataset', 'sft', db, '--store', reviews, '-o', `${db}-wal`], dir), /which this command reads/);
    assert.deepEqual([sha(db), sha(reviews)], before);
  });

  it('a hard link or a symbolic link of the session file as -o: exit 6, the file unchanged', () => {
    const { dir, db, reviews } = files();
    const before = sha(db);
    const hard = join(dir, 'hard.jsonl');
    linkSync(db, hard);
    const soft = join(dir, 'soft.jsonl');
    symlinkSync(db, soft);
    for (const out of [hard, soft]) {
      refused(run(['dataset', 'sft', db, '--store', reviews, '-o', out]), /which this command reads/);
      refused(run(['export', db, 'trip', '-f', 'jsonl', '-o', out]), /which this command reads/);
    }
    assert.equal(sha(db), before);
  });

  it('export, review export and traces export refuse the store they read', () => {
    const { dir, db, reviews } = files();
    const traces = join(dir, 'traces.db');
    TraceStore.open(traces).close();
    const before = [sha(db), sha(reviews), sha(traces)];
    refused(run(['export', db, 'trip', '-f', 'json', '-o', db]), /which this command reads/);
    refused(run(['export', db, 'trip', '-f', 'md', '-o', reviews]), /which this command reads/);
    // JSONL reads no reviews, yet its -o is never the review store, beside the file or named, even with --force.
    refused(run(['export', db, 'trip', '-f', 'jsonl', '-o', reviews, '--force']), /would destroy/);
    refused(
      run(['export', 'd.db', 'trip', '-f', 'jsonl', '--reviews', 'd.db.reviews.db', '-o', './d.db.reviews.db', '--force'], dir),
      /would destroy/,
    );
    refused(run(['review', 'export', '--store', reviews, '-o', reviews]), /which this command reads/);
    refused(run(['traces', 'export', '--store', traces, '--session', 'trip', '-o', traces]), /which this command reads/);
    refused(run(['import', db, '--db', db]), /which this command reads/);
    assert.deepEqual([sha(db), sha(reviews), sha(traces)], before);
  });

  it('an existing -o file: refused (exit 6) and unchanged without --force, replaced with it, for every writer', () => {
    const { dir, db, reviews } = files();
    const traces = join(dir, 'traces.db');
    TraceStore.open(traces).close();
    const writers: [string, string[]][] = [
      ['export.jsonl', ['export', db, 'trip', '-f', 'jsonl']],
      ['export.md', ['export', db, 'trip', '-f', 'md']],
      ['dataset.jsonl', ['dataset', 'sft', db, '--store', reviews]],
      ['dataset.csv', ['dataset', 'eval', db, '--store', reviews, '--csv']],
      ['reviews.json', ['review', 'export', '--store', reviews]],
      ['traces.json', ['traces', 'export', '--store', traces, '--session', 'trip']],
    ];
    for (const [name, args] of writers) {
      const out = join(dir, name);
      writeFileSync(out, 'mine\n');
      refused(run([...args, '-o', out]), /already exists: choose another file, or replace it \(--force/);
      assert.equal(readFileSync(out, 'utf8'), 'mine\n', name);
      const r = run([...args, '-o', out, '--force']);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.notEqual(readFileSync(out, 'utf8'), 'mine\n', name);
    }
    assert.deepEqual(
      readdirSync(dir).filter((f) => /\.tmp$|partial/.test(f)),
      [],
      'no temporary file left',
    );
  });

  it('a write that fails names the -o file, not a temporary file; exit 6', () => {
    const { dir, db } = files();
    const out = join(dir, 'missing-folder', 'out.jsonl');
    const r = run(['export', db, 'trip', '-f', 'jsonl', '-o', out]);
    refused(r, /missing-folder\/out\.jsonl cannot be written \(ENOENT/);
    assert.doesNotMatch(r.stderr, /partial|\.tmp/);
  });

  it('a dangling link planted where the review store would be created: exit 6, nothing created outside', () => {
    const { dir } = files();
    const outside = join(tmp.dir, 'outside.db');
    const store = join(dir, 'planted.reviews.db');
    symlinkSync(outside, store);
    writeFileSync(join(dir, 'x.json'), JSON.stringify({ format: 'agent-session-inspector/reviews', version: 1, turnReviews: [] }));
    refused(run(['review', 'import', join(dir, 'x.json'), '--store', store]), /is a symbolic link/);
    assert.equal(existsSync(outside), false);
  });

  it('--force is in the help of every writing command', () => {
    for (const command of ['export', 'review', 'traces', 'dataset']) {
      assert.match(run([command, '--help']).stdout, /--force/, command);
    }
  });
});
