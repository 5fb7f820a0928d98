/**
 * `agent-sessions doctor` (issue 45), run in this process on real files: one block per finding and exit 1; --fix
 * with its backup, the re-check and exit 0; --json; exit 0 on a clean file, 4 on a file that is no session store, 6
 * for a backup path that exists or cannot be written, 2 for --backup without --fix, and for --fix or --backup on a
 * server address.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store';
import { CONFORMANCE_DIR, makeDoctorFixture } from '../../support/doctorFixtures';
import { copyWithHotJournal } from '../../support/hotJournal';
import { tempDir } from '../../support/tempFiles';
import { runCliCaptured } from '../../support/cliCapture';

const cli = runCliCaptured;

describe('agent-sessions doctor', () => {
  const tmp = tempDir('asi-cli-doctor-');
  after(() => tmp.cleanup());
  let n = 0;
  const fixture = (kind: Parameters<typeof makeDoctorFixture>[0]) => {
    const file = join(tmp.dir, `${n++}-${kind}.db`);
    makeDoctorFixture(kind, file);
    return file;
  };

  it('prints one block per finding and exits 1', async () => {
    const file = fixture('turn-zero-usage');
    const r = await cli('doctor', file);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^turn-zero-usage: usage row for turn 0 on a branch with no turn$/m);
    assert.match(r.stdout, /where: +session "alice", branch "fresh", turn 0, turn_usage row 8/);
    assert.match(r.stdout, /upstream: +https:\/\/github\.com\/openai\/openai-agents-python\/issues\/4821/);
    assert.match(r.stdout, /repair: +Deletes the usage row/);
    assert.match(r.stdout, /: 1 finding\(s\)$/m);
  });

  it('--fix backs up, repairs, checks again and exits 0; the next check is clean', async () => {
    const file = fixture('dangling-tool-call');
    const backup = join(tmp.dir, 'fix.backup.db');
    const r = await cli('doctor', file, '--fix', '--backup', backup);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /1 tool output\(s\) added/);
    assert.match(r.stdout, new RegExp(`Backup: ${backup.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    assert.match(r.stdout, /Re-check:\n.*: no findings/);
    assert.ok(existsSync(backup));
    assert.equal((await cli('doctor', backup)).code, 1);
    assert.equal((await cli('doctor', file)).code, 0);
  });

  it('--json gives the findings with their kind, place and repair', async () => {
    const file = fixture('orphan-messages');
    const r = await cli('doctor', '--db', file, '--json');
    assert.equal(r.code, 1);
    const report = JSON.parse(r.stdout) as {
      count: number;
      findings: { kind: string; session: string; rows: unknown; upstream: string }[];
    };
    assert.equal(report.count, 1);
    assert.equal(report.findings[0]!.kind, 'orphan-messages');
    assert.deepEqual(report.findings[0]!.rows, { agent_messages: [9, 10] });
    assert.match(report.findings[0]!.upstream, /issues\/3346/);
  });

  it('reports a file that fails integrity_check and offers no repair', async () => {
    const file = fixture('integrity-check');
    const r = await cli('doctor', file, '--fix', '--backup', join(tmp.dir, 'never.db'));
    assert.equal(r.code, 1);
    assert.match(r.stdout, /repair: +none \(reported only\)/);
    assert.match(r.stdout, /Not repaired: integrity_check failed/);
    assert.equal(existsSync(join(tmp.dir, 'never.db')), false);
  });

  it('exits 0 on a clean file, 4 on a file that is no session store, 6 for a backup that exists, 2 for --backup alone', async () => {
    const clean = join(tmp.dir, 'clean.db');
    copyFileSync(join(CONFORMANCE_DIR, 'ref-basic.db'), clean);
    const ok = await cli('doctor', clean);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /no findings/);
    const text = join(tmp.dir, 'notes.txt');
    writeFileSync(text, 'not a database, not at all; '.repeat(200));
    assert.equal((await cli('doctor', text)).code, 4);
    const file = fixture('orphan-usage');
    const r = await cli('doctor', file, '--fix', '--backup', text);
    assert.equal(r.code, 6);
    assert.match(r.stderr, /already exists/);
    assert.equal((await cli('doctor', file)).code, 1);
    assert.equal((await cli('doctor', file, '--backup', join(tmp.dir, 'b.db'))).code, 2);
  });

  it('exits 6 naming the backup when its folder does not exist, and repairs nothing', async () => {
    const file = fixture('orphan-usage');
    const backup = join(tmp.dir, 'no-such-folder', 'b.db');
    const r = await cli('doctor', file, '--fix', '--backup', backup);
    assert.equal(r.code, 6, r.stderr);
    assert.ok(r.stderr.includes(`The backup ${backup} cannot be written`), r.stderr);
    assert.equal((await cli('doctor', file)).code, 1);
  });

  it('a --session the file does not hold exits 3, with and without --fix, and repairs nothing (not even its -wal)', async () => {
    const file = fixture('stale-wal');
    for (const args of [[], ['--fix'], ['--json'], ['--fix', '--json']]) {
      const r = await cli('doctor', file, '--session', 'alcie', ...args);
      assert.equal(r.code, 3, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /There is no session 'alcie'/);
      assert.equal(r.stdout, '');
    }
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.includes('doctor-backup')),
      [],
      'no backup: nothing was repaired',
    );
    const still = await cli('doctor', file, '--session', 'alice');
    assert.equal(still.code, 1, still.stderr);
    assert.match(still.stdout, /^stale-wal:/m, "the file's -wal was left for a repair asked of the whole file or a session it holds");
  });

  it('a hot -journal a killed writer left: reads exit 4 naming it; --fix rolls it back and the file reads again', async () => {
    const source = join(tmp.dir, 'journal-source.db');
    copyFileSync(join(CONFORMANCE_DIR, 'ref-multisession.db'), source);
    const db = openDatabase(source);
    db.prepare('PRAGMA journal_mode = DELETE').get();
    db.close();
    const file = join(tmp.dir, 'hot.db');
    copyWithHotJournal(source, file, 'bob');
    for (const args of [
      ['ls', file],
      ['export', file, 'bob', '--format', 'jsonl'],
      ['doctor', file],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 4, `${args[0]}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`left ${file}-journal, a hot rollback journal`), r.stderr);
      assert.doesNotMatch(r.stderr, /-shm|WAL/, "the read-only case of a WAL file's -shm is not the matter");
    }
    const fixed = await cli('doctor', file, '--fix');
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.match(fixed.stdout, /Rolled back: the unfinished transaction a killed writer left in .*hot\.db-journal/);
    assert.equal(existsSync(`${file}-journal`), false);
    const ls = await cli('ls', file, '--json');
    assert.equal(ls.code, 0, ls.stderr);
    const expected = await cli('ls', source, '--json');
    assert.deepEqual(JSON.parse(ls.stdout), JSON.parse(expected.stdout), 'the last commit, as the source still holds it');
  });

  it('refuses --fix and --backup on a server address before connecting (exit 2; test/remote has the server checks)', async () => {
    // Nothing listens on port 1: a refusal that tried to connect first would exit 1 (unreachable) instead.
    for (const address of ['postgresql://u@127.0.0.1:1/db', 'redis://127.0.0.1:1/0']) {
      for (const args of [['--fix'], ['--backup', join(tmp.dir, 'b.db')]]) {
        const r = await cli('doctor', address, ...args);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /server stores are checked read-only: --fix and --backup repair session files only/);
      }
    }
    assert.equal(existsSync(join(tmp.dir, 'b.db')), false);
  });
});
