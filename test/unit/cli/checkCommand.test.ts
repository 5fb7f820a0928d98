/**
 * `agent-sessions check` (the CLI bundled from source as dist/cli.js is, run as a child process) with the scripted
 * agent command of the check's tests (test/unit/agents/check/checkAgentKit.ts): the usage errors refused before any
 * run, the line per case, the closing line, the exit codes, --json, and Ctrl+C.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildSharedCli } from '../../support/cliBundle';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { FAITHFUL, checkAgent, seedCheckSession, seedReviews, turnKey, type Reply } from '../agents/check/checkAgentKit';
import { ReviewStore } from '../../../src/store/reviews/reviewStore';

// The bundle lives outside the repository: NODE_PATH lets it find better-sqlite3 in this checkout's node_modules.
const ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', NODE_PATH: join(ROOT, 'node_modules') };

describe('agent-sessions check (the CLI bundled from source, a scripted agent command)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-check-');
  let dir: string;
  let db: string;
  let reviews: string;
  let n = 0;
  // Built once: run from the sources through tsx, each of the suite's 30-odd runs compiled the CLI again (0.4 s each).
  let CLI: string[];
  before(async () => {
    CLI = ['--no-warnings', await buildSharedCli()];
  });

  beforeEach(async () => {
    dir = join(tmp.dir, `t${++n}`);
    mkdirSync(dir);
    db = join(dir, 'conversations.db');
    await seedCheckSession(db);
    reviews = join(dir, 'reviews.db');
    await seedReviews(reviews, db);
  });
  after(() => tmp.cleanup());

  function cli(args: string[]) {
    const r = spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: ENV, timeout: 90_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  const agent = (name: string, replies: Record<string, Reply>) => checkAgent(dir, name, replies);
  /**
   * Runs `check` with `args` and sends `signal` 1.5 s after the first case (s1/main/2) passed, so the hanging ones have
   * started: what a user's Ctrl+C or a CI timeout does mid-check.
   */
  async function interruptAfterFirstPass(args: string[], signal: NodeJS.Signals, env: NodeJS.ProcessEnv = ENV) {
    const child = spawn(process.execPath, [...CLI, 'check', ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (/PASS s1\/main\/2/.test(stdout)) setTimeout(() => child.kill(signal), 1500);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const [code, ended] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    return { code, signal: ended, stdout, stderr };
  }
  /** The lines with their times taken out (they vary). */
  const steady = (text: string) => text.replace(/\d+\.\d s/g, 'T s');

  it('refuses bad arguments with exit code 2 before running anything', () => {
    const command = agent('never-run', FAITHFUL);
    const cases: [string[], RegExp][] = [
      [['check', db, '--reviews', reviews], /check needs exactly one of --command and --url/],
      [['check', db, '--reviews', reviews, '--command', command, '--url', 'http://127.0.0.1:9/'], /exactly one of --command and --url/],
      [['check', db, '--reviews', reviews, '--command', command, '--tools', 'mock'], /--tools takes replay, strict or live, got 'mock'/],
      [
        ['check', db, '--reviews', reviews, '--command', command, '--concurrency', '0'],
        /--concurrency is a whole number from 1 to 32, got 0/,
      ],
      [
        ['check', db, '--reviews', reviews, '--command', command, '--concurrency', '33'],
        /--concurrency is a whole number from 1 to 32, got 33/,
      ],
      [['check', db, '--reviews', reviews, '--command', command, '--grader', 'vibes'], /--grader: "vibes" is not a grader/],
      [['check', db, '--reviews', reviews, '--command', command, '--grader', 'model'], /--grader: The model grader needs an API key/],
      [['check', db, '--reviews', reviews, '--command', command, '--query', 'is:great'], /--query: Unknown filter "is:great"/],
      [['check', db, '--reviews', reviews, '--command', command, '--message', 'hi'], /check takes no --message/],
    ];
    for (const [args, message] of cases) {
      const r = cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    }
  });

  it('a faithful agent: one line per case, the closing line, which graders ran, exit 0; the file unchanged', () => {
    const bytes = readFileSync(db);
    const mtime = statSync(db).mtimeMs;
    const r = cli([
      'check',
      db,
      '--reviews',
      reviews,
      '--command',
      agent('faithful', FAITHFUL),
      '--grader',
      'trajectory',
      '--grader',
      'answer:contains',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = steady(r.stdout).split('\n');
    assert.equal(lines[0], 'ORPHANED s1/main/9  the turn is gone');
    assert.deepEqual(lines.slice(1, 4).sort(), [
      'PASS s1/main/2  trajectory ✓ answer:contains ✓  40 tok  T s',
      'PASS s1/main/3  trajectory ✓ answer:contains ✓  40 tok  T s',
      // The bad turn's case: its recorded calls are no reference (no trajectory result); the rule's pass instead.
      'PASS s1/main/4  not-rejected ✓ answer:contains ✓  40 tok  T s',
    ]);
    assert.deepEqual(lines.slice(4), ['3 passed, 0 failed, 1 orphaned', 'graders: trajectory, answer:contains', '']);
    assert.ok(readFileSync(db).equals(bytes));
    assert.equal(statSync(db).mtimeMs, mtime);
  });

  it("a regressed agent fails the right cases with the graders' reasons, exit 1; --json has everything", () => {
    const regressed: Record<string, Reply> = {
      ...FAITHFUL,
      'Mail Ana the forecast': { calls: [{ name: 'post_slack', arguments: '{"to":"ana"}' }], answer: 'Posted.' },
    };
    const command = agent('regressed', regressed);
    const r = cli([
      'check',
      db,
      '--reviews',
      reviews,
      '--command',
      command,
      '--grader',
      'trajectory',
      '--grader',
      'answer:contains',
      '--query',
      'reviewed:yes',
    ]);
    assert.equal(r.code, 1, r.stderr);
    const text = steady(r.stdout);
    // The bad turn's case fails on its answer; its calls (post_slack, not the recorded send_email) are not judged.
    assert.match(
      text,
      /\nFAIL s1\/main\/4 {2}not-rejected ✓ answer:contains ✗ {2}40 tok {2}T s\n {4}answer:contains: the answer does not contain "i sent ana the forecast"; it begins "posted"\n/,
    );
    assert.match(text, /\n2 passed, 1 failed, 1 orphaned\ngraders: trajectory, answer:contains\n$/);
    const json = cli([
      'check',
      db,
      '--reviews',
      reviews,
      '--command',
      command,
      '--grader',
      'trajectory',
      '--grader',
      'answer:contains',
      '--json',
    ]);
    assert.equal(json.code, 1, json.stderr);
    const report = JSON.parse(json.stdout) as {
      file: string;
      graders: string[];
      results: {
        case: { id: string; expected: { trajectory: unknown[] | null } };
        status: string;
        graders: { grader: string }[];
        run: { trajectory: unknown[] } | null;
      }[];
      summary: Record<string, number>;
      interrupted: boolean;
    };
    assert.deepEqual(report.graders, ['trajectory', 'answer:contains']);
    assert.deepEqual(report.summary, { passed: 2, failed: 1, errors: 0, orphaned: 1 });
    assert.equal(report.interrupted, false);
    assert.deepEqual(
      report.results.map((x) => [x.case.id, x.status]),
      [
        ['s1/main/9', 'orphaned'],
        ['s1/main/2', 'pass'],
        ['s1/main/3', 'pass'],
        ['s1/main/4', 'fail'],
      ],
    );
    assert.deepEqual(report.results[3]!.run!.trajectory, [
      { name: 'post_slack', arguments: '{"to":"ana"}', output: 'post_slack ran live' },
    ]);
    // The bad turn's case expects no trajectory, and its results are the rule's and the answer grader's.
    assert.equal(report.results[3]!.case.expected.trajectory, null);
    assert.deepEqual(
      report.results[3]!.graders.map((g) => g.grader),
      ['not-rejected', 'answer:contains'],
    );
  });

  it('an agent that fails is an ERROR line with its message, and counted; exit 1', () => {
    const broken = join(dir, 'broken.js');
    writeFileSync(broken, `console.error('missing config.yaml'); process.exit(3);`);
    const r = cli(['check', db, '--reviews', reviews, '--command', `"${process.execPath}" "${broken}"`, '--query', 'lyon']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      steady(r.stdout),
      /^ERROR s1\/main\/3 {2}T s\n {4}The agent command '.*' exited with code 3 before sending any event\.\n {4}stderr \(last lines\):\n {4}missing config\.yaml\n0 passed, 0 failed, 1 error\ngraders: trajectory\n$/,
    );
  });

  it('a review file that matches no turn says so and exits 1 with 0 cases', () => {
    const empty = join(dir, 'empty-reviews.db');
    ReviewStore.open(empty).close();
    const command = agent('unused', FAITHFUL);
    const none = cli(['check', db, '--reviews', empty, '--command', command]);
    assert.equal(none.code, 1, none.stderr);
    assert.equal(none.stdout, `No cases: ${empty} holds no turn review. Nothing was checked.\n`);
    const query = cli(['check', db, '--reviews', reviews, '--command', command, '--query', 'tag:nothing-like-it']);
    assert.equal(query.code, 1, query.stderr);
    assert.match(
      query.stdout,
      /^No cases: none of the 5 turn reviews in .* is a good turn or a bad turn with a correction matching --query "tag:nothing-like-it"\. Nothing was checked\.\n$/,
    );
  });

  it('a session file that does not exist is exit 3; a review store that is not one is exit 4', () => {
    const command = agent('unused', FAITHFUL);
    const missing = cli(['check', join(dir, 'missing.db'), '--reviews', reviews, '--command', command]);
    assert.deepEqual([missing.code, missing.stderr], [3, `agent-sessions: no session file at ${join(dir, 'missing.db')}\n`]);
    const noStore = cli(['check', db, '--reviews', join(dir, 'nope.db'), '--command', command]);
    assert.deepEqual([noStore.code, noStore.stderr], [3, `agent-sessions: no review store at ${join(dir, 'nope.db')}\n`]);
    // The default review store (`<file>.reviews.db`) missing is a missing store too, as the exit-code table says.
    const noDefault = cli(['check', db, '--command', command]);
    assert.equal(noDefault.code, 3, noDefault.stderr);
    assert.match(noDefault.stderr, /name its store with --reviews <file> \(.*conversations\.db\.reviews\.db does not exist\)/);
    const notStore = cli(['check', db, '--reviews', db, '--command', command]);
    assert.equal(notStore.code, 4, notStore.stderr);
    const notSession = cli(['check', reviews, '--reviews', reviews, '--command', command]);
    assert.equal(notSession.code, 4, notSession.stderr);
  });

  it('--save keeps the results; --baseline lists the flips, regressions first; both names checked before any run', () => {
    const faithful = agent('faithful', FAITHFUL);
    const saved = cli(['check', db, '--reviews', reviews, '--command', faithful, '--save', 'v1']);
    assert.equal(saved.code, 0, saved.stderr);
    assert.match(
      saved.stdout,
      new RegExp(`\\nsaved as experiment "v1" in ${join(dir, 'reviews.experiments.db').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`),
    );
    // Before anything runs: a name saved already (without --force), a baseline that is not there.
    const again = cli(['check', db, '--reviews', reviews, '--command', faithful, '--save', 'v1']);
    assert.equal(again.code, 6, again.stderr);
    assert.match(again.stderr, /An experiment named "v1" is saved in .*; choose another name, or replace it with --force\./);
    const missing = cli(['check', db, '--reviews', reviews, '--command', faithful, '--baseline', 'v0']);
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(missing.stderr, /--baseline: no experiment named "v0" in .* \(saved: v1\)/);
    assert.equal(again.stdout + missing.stdout, '');
    // Another tool on a good turn regresses it. On the bad turn it does not: the calls the turn was reviewed bad with
    // are no reference, and by trajectory alone its case passes while its answer is not the one reviewed as bad.
    const regressed = agent('regressed', {
      ...FAITHFUL,
      'Weather in Lyon?': { calls: [{ name: 'get_forecast', arguments: '{"city":"Lyon"}' }], answer: 'Rain in Lyon, 12°C.' },
      'Mail Ana the forecast': { calls: [{ name: 'post_slack', arguments: '{"to":"ana"}' }], answer: 'Posted.' },
    });
    const compared = cli(['check', db, '--reviews', reviews, '--command', regressed, '--baseline', 'v1', '--save', 'v2']);
    assert.equal(compared.code, 1, compared.stderr);
    assert.match(steady(compared.stdout), /\nPASS s1\/main\/4 {2}not-rejected ✓ {2}40 tok {2}T s\n/);
    assert.match(
      compared.stdout,
      /\n2 passed, 1 failed, 1 orphaned\ngraders: trajectory\nagainst baseline "v1" \(.*\): 1 regression, 0 fixes, 3 unchanged\n {2}REGRESSION s1\/main\/3 {2}pass → fail {2}trajectory: diverged at step 1: get_forecast instead of get_weather\nsaved as experiment "v2" in .*\n$/,
    );
  });

  it('--junit and --markdown write the reports; onto an input, or an existing file without --force, nothing runs', () => {
    const command = agent('faithful', FAITHFUL);
    const junit = join(dir, 'check.xml');
    const markdown = join(dir, 'check.md');
    const r = cli(['check', db, '--reviews', reviews, '--command', command, '--junit', junit, '--markdown', markdown]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`\\nwrote ${junit}\\nwrote ${markdown}\\n$`));
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /);
    assert.match(xml, /tests="4" failures="0" errors="0" skipped="1"/);
    assert.match(readFileSync(markdown, 'utf8'), /Agent check: 3 passed, 0 failed/);
    const before = readFileSync(db);
    const link = join(dir, 'link.md');
    symlinkSync(junit, link);
    for (const [args, code, message] of [
      [['--junit', db], 6, /would destroy .*conversations\.db, which this command reads/],
      [['--markdown', `${reviews}-wal`], 6, /which this command reads/],
      [['--junit', junit], 6, /check\.xml already exists: choose another file, or replace it \(--force/],
      [['--junit', junit, '--markdown', junit], 2, /--junit and --markdown name the same file/],
      // The same file spelt otherwise (relative to the folder the CLI runs in), or through a link: still the same.
      [['--junit', junit, '--markdown', relative(ROOT, junit), '--force'], 2, /--junit and --markdown name the same file/],
      [['--junit', junit, '--markdown', link, '--force'], 2, /--junit and --markdown name the same file/],
      // A folder that is not there: refused before any case runs, not after every case ran.
      [['--junit', join(dir, 'reports', 'check.xml')], 6, /the folder .*reports does not exist/],
      [['--markdown', join(dir, 'reports', 'check.md')], 6, /the folder .*reports does not exist/],
    ] as [string[], number, RegExp][]) {
      const refused = cli(['check', db, '--reviews', reviews, '--command', command, ...args]);
      assert.equal(refused.code, code, refused.stderr);
      assert.match(refused.stderr, message);
      assert.equal(refused.stdout, '');
    }
    assert.ok(readFileSync(db).equals(before));
    assert.equal(cli(['check', db, '--reviews', reviews, '--command', command, '--junit', junit, '--force']).code, 0);
  });

  it('Ctrl+C stops the running cases, prints what finished and exits 130', async () => {
    const replies: Record<string, Reply> = {
      ...FAITHFUL,
      'Weather in Lyon?': { answer: 'never', hang: true },
      'Mail Ana the forecast': { answer: 'never', hang: true },
    };
    // Paris has finished; Lyon and Mail hang: interrupt once the first PASS is out and they have started.
    const { code, stdout, stderr } = await interruptAfterFirstPass(
      [db, '--reviews', reviews, '--command', agent('hangs', replies), '--concurrency', '3'],
      'SIGINT',
    );
    assert.equal(code, 130, stderr);
    assert.match(steady(stdout), /^ORPHANED s1\/main\/9 {2}the turn is gone\nPASS s1\/main\/2 {2}trajectory ✓ {2}40 tok {2}T s\n/);
    assert.match(
      stdout,
      /\n1 passed, 0 failed, 1 orphaned\ngraders: trajectory\nInterrupted: 2 of 4 cases finished; the others were stopped or never started\.\n$/,
    );
  });
  it('an experiment store that would fail the save (a link, a missing folder) is refused before any case runs', () => {
    const command = agent('faithful', FAITHFUL);
    const real = join(dir, 'real.experiments.db');
    const link = join(dir, 'link.experiments.db');
    symlinkSync(real, link);
    for (const [args, message] of [
      [['--experiments', link], /link\.experiments\.db is a symbolic link/],
      [['--experiments', join(dir, 'nowhere', 'e.db')], /Cannot create the experiment store .*: the folder .*nowhere does not exist/],
    ] as [string[], RegExp][]) {
      const r = cli(['check', db, '--reviews', reviews, '--command', command, '--save', 'v1', ...args]);
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '', 'nothing ran');
    }
    assert.ok(!existsSync(real));
  });

  it('the reports are written before the save: a save that fails at the end loses no report; the exit code is the worst', () => {
    const store = join(dir, 'e.db');
    // An agent that spoils the experiment store's path while the check runs (after every argument was checked).
    const spoiler = join(dir, 'spoiler.js');
    writeFileSync(spoiler, `require('fs').writeFileSync(${JSON.stringify(store)}, 'not a database'); process.exit(3);`);
    const junit = join(dir, 'check.xml');
    const markdown = join(dir, 'check.md');
    const r = cli([
      'check',
      db,
      '--reviews',
      reviews,
      '--command',
      `"${process.execPath}" "${spoiler}"`,
      '--query',
      'lyon',
      '--save',
      'v1',
      '--experiments',
      store,
      '--junit',
      junit,
      '--markdown',
      markdown,
    ]);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /agent-sessions: the experiment "v1" was not written: /);
    assert.match(r.stdout, /\n0 passed, 0 failed, 1 error\ngraders: trajectory\nwrote .*check\.xml\nwrote .*check\.md\n$/);
    assert.match(readFileSync(junit, 'utf8'), /errors="1"/);
    assert.match(readFileSync(markdown, 'utf8'), /^### ❌ Agent check: 0 passed, 0 failed, 1 error/);
  });

  it('one case per turn: a stale review of a message the turn held before gives way to the current one (noted)', () => {
    const store = ReviewStore.open(reviews);
    store.setTurnReview({ sessionId: 's1', branchId: 'main', turn: 2, turnKey: turnKey('Weather in Marseille?') }, { verdict: 'good' });
    store.close();
    const junit = join(dir, 'check.xml');
    const r = cli(['check', db, '--reviews', reviews, '--command', agent('faithful', FAITHFUL), '--save', 'v1', '--junit', junit]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^note: a review of s1\/main\/2 is not checked: a review of another message the turn held before/m);
    assert.match(r.stdout, /\n3 passed, 0 failed, 1 orphaned\n/);
    assert.match(r.stdout, /\nsaved as experiment "v1" in .*\nwrote .*check\.xml\n$/);
    assert.equal((readFileSync(junit, 'utf8').match(/name="turn 2"/g) ?? []).length, 1);
  });

  it('SIGTERM (a CI timeout) stops the check as Ctrl+C does: reports written, scratch removed, then ended by SIGTERM', async () => {
    const tmpdir = join(dir, 'tmp');
    mkdirSync(tmpdir);
    const junit = join(dir, 'check.xml');
    const markdown = join(dir, 'check.md');
    const replies: Record<string, Reply> = { ...FAITHFUL, 'Weather in Lyon?': { answer: 'never', hang: true } };
    const { code, signal, stdout, stderr } = await interruptAfterFirstPass(
      [db, '--reviews', reviews, '--command', agent('hangs', replies), '--concurrency', '1', '--junit', junit, '--markdown', markdown],
      'SIGTERM',
      { ...ENV, TMPDIR: tmpdir },
    );
    assert.deepEqual([code, signal], [null, 'SIGTERM'], stderr);
    assert.match(
      stdout,
      /\nInterrupted: 2 of 4 cases finished; the others were stopped or never started\.\nwrote .*check\.xml\nwrote .*check\.md\n$/,
    );
    assert.match(readFileSync(junit, 'utf8'), /<testsuite name="interrupted"/);
    assert.match(readFileSync(markdown, 'utf8'), /^### ⏹️ Agent check \(interrupted\)/);
    assert.deepEqual(
      readdirSync(tmpdir).filter((f) => f.startsWith('agent-sessions-check-')),
      [],
      'the scratch folder is gone',
    );
  });

  it('a closed stdout (| head) stops the check as Ctrl+C does, writes its reports to their files, exits 141', async () => {
    const tmpdir = join(dir, 'tmp');
    mkdirSync(tmpdir);
    const junit = join(dir, 'check.xml');
    const replies: Record<string, Reply> = { ...FAITHFUL, 'Weather in Lyon?': { answer: 'slow', delayMs: 3000 } };
    const child = spawn(
      process.execPath,
      [...CLI, 'check', db, '--reviews', reviews, '--command', agent('slow', replies), '--junit', junit],
      {
        cwd: ROOT,
        env: { ...ENV, TMPDIR: tmpdir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 141, stderr);
    assert.match(readFileSync(junit, 'utf8'), /<testsuite name="interrupted"/);
    assert.deepEqual(
      readdirSync(tmpdir).filter((f) => f.startsWith('agent-sessions-check-')),
      [],
      'the scratch folder is gone',
    );
  });
});
