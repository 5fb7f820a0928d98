/**
 * `agent-sessions run`, from the real CLI bundle as a child process: a what-if on two models through the Python
 * fixture command (python_turn.py), its events as JSON lines, the rows it left; a failing command's exit code; what
 * is refused before any agent starts (a fork name the store would refuse, a missing session) and how a run that
 * failed before its start is printed.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { failedBeforeWriting, type RunEvent } from '../../../src/shared/protocol/runEvents';
import { completedRun, pausedRun } from '../../support/runOutcomes';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { readBranch, seedSession } from '../agents/agentTestKit';
import { PYTHON_TURN, snapshot } from '../agents/command/commandKit';
import { AdvancedSQLiteSession } from '../../../src/store';
import { defaultForkName, runExitCode } from '../../../src/cli/runCommand';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';

const hasPython = spawnSync('python3', ['--version']).status === 0;

describe('agent-sessions run (the real binary, a Python agent command)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-run-');
  const cli = sharedCliPath();
  const db = join(tmp.dir, 'conversations.db');

  before(async function () {
    if (!hasPython) {
      console.log('    (skipped: python3 is not installed, so the Python agent command cannot run)');
      this.skip();
    }
    await buildSharedCli();
    await seedSession(db, [
      ['Weather in Paris?', 'Mild.'],
      ['Tomorrow?', 'Rain.'],
    ]);
  });
  after(() => tmp.cleanup());

  function run(args: string[], mode = 'ok') {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), AGENT_FIXTURE_MODE: mode, NO_COLOR: '1' },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('forks at a turn and runs each --model on its own branch; --json prints the run events', async () => {
    const command = `python3 "${PYTHON_TURN}"`;
    const r = run([
      'run',
      db,
      's1',
      '--from-turn',
      '2',
      '--command',
      command,
      '-m',
      'And after?',
      '--model',
      'gpt-4.1',
      '--model',
      'o4-mini',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent);
    const outcomes = events.filter((e) => e.kind === 'run/completed');
    assert.equal(outcomes.length, 2);
    const branches = events.flatMap((e) => (e.kind === 'run/started' ? [e.branchId] : [])).sort();
    assert.equal(branches.length, 2);
    for (const branch of branches) {
      const state = await readBranch(db, branch);
      assert.deepEqual(state.turns, [1, 2]);
      const answer = state.items[state.items.length - 1] as { content: { text: string }[] };
      const model = branch.includes('o4-mini') ? 'o4-mini' : 'gpt-4.1';
      assert.equal(answer.content[0]?.text, `Answer from ${model}: And after?`);
      assert.equal(state.usage[0]?.totalTokens, 28);
    }
  });

  it('continues a branch and streams the answer as text; a failing command exits 1 with its message', () => {
    const command = `python3 "${PYTHON_TURN}"`;
    const ok = run(['run', db, 's1', '--command', command, '--message', 'Hello?']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^python3 .* on branch 'main'\nAnswer from default: Hello\?\nDone: Saved turn 3 on branch 'main': 2 item\(s\) and its usage\./,
    );
    const bad = run(['run', db, 's1', '--command', command, '--message', 'Hello?'], 'exit-at-once');
    assert.equal(bad.code, 1);
    assert.match(
      bad.stdout,
      /Failed: The agent command '.*' exited with code 3 before sending any event\.\nstderr \(last lines\):\nboom: no config/,
    );
  });

  it('a run the agent paused, waiting for input, is printed as paused and exits 7; --json carries what it waits for', () => {
    const command = `python3 "${PYTHON_TURN}"`;
    const fork = (name: string) => ['run', db, 's1', '--from-turn', '2', '--name', name, '--command', command, '--message', 'Mail Bob?'];
    const r = run(fork('paused-text'), 'interrupt');
    assert.equal(r.code, 7, r.stderr);
    assert.match(
      r.stdout,
      /\n→ send_email\(.*\)\n\nPaused: waiting for input — Send the email\? \(tool call call_send\)\nKept your message as turn 2 on branch 'paused-text'/,
    );
    assert.doesNotMatch(r.stdout, /Failed|Stopped/);

    const j = run([...fork('paused-json'), '--json'], 'interrupt');
    assert.equal(j.code, 7, j.stderr);
    const outcome = JSON.parse(j.stdout.trim().split('\n').at(-1) ?? '') as RunEvent;
    assert.equal(outcome.kind, 'run/failed');
    if (outcome.kind !== 'run/failed') return;
    assert.equal(outcome.failure, 'paused');
    assert.deepEqual(outcome.interrupts, [{ text: 'Send the email?', toolCallId: 'call_send' }]);
    assert.equal(outcome.written.turn, 2);
  });

  it('refuses a run without exactly one of --command and --url', () => {
    const r = run(['run', db, 's1', '--message', 'x']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /run needs exactly one of --command and --url/);
  });
});

describe('agent-sessions run: what is refused before the agent starts (the real binary)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-run-refused-');
  const cli = sharedCliPath();
  const db = join(tmp.dir, 'conversations.db');
  const marker = join(tmp.dir, 'agent-started');
  // An agent that only leaves a mark: any run that reaches it fails, and the mark says it was started.
  const agent = `"${process.execPath}" -e "require('fs').writeFileSync(process.argv[1], 'x')" "${marker}"`;

  before(async () => {
    await buildSharedCli();
    await seedSession(db, [
      ['Weather in Paris?', 'Mild.'],
      ['Tomorrow?', 'Rain.'],
    ]);
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: db });
    await s.createBranchFromTurn(2, 'alt');
    await s.switchToBranch('main');
    await s.createBranchFromTurn(2, 'gone');
    await s.deleteBranch('gone', true);
    s.close();
  });
  after(() => tmp.cleanup());

  function run(args: string[]) {
    const r = spawnSync(process.execPath, [cli, 'run', ...args, '--command', agent, '--message', 'Again?'], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '1' },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('a fork name the store would refuse (main, used, reserved, blank) is a usage error (2); nothing runs or changes', async () => {
    const before = await snapshot(db);
    for (const [args, message] of [
      [['--from-turn', '1', '--name', 'main'], /--name 'main': 'main' is the session's first branch/],
      [['--from-turn', '1', '--name', 'alt'], /--name 'alt': 'alt' has already been used in this session/],
      [['--from-turn', '2', '--name', 'alt'], /--name 'alt': 'alt' has already been used in this session/],
      [['--from-turn', '1', '--name', 'gone'], /--name 'gone': 'gone' has already been used in this session/],
      [['--from-turn', '1', '--name', ''], /--name '': A branch name cannot be empty/],
      [['--from-turn', '1', '--name', '   '], /--name ' {3}': A branch name cannot be empty/],
    ] as const) {
      const r = run([db, 's1', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    }
    assert.equal(existsSync(marker), false, 'an agent was started');
    assert.deepEqual(await snapshot(db), before);
  });

  it('a session or file that does not exist is not found (3), a file that is no session store is 4: no agent starts', async () => {
    const r = run([db, 'nobody']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /no session 'nobody' in .*conversations\.db/);
    assert.equal(existsSync(marker), false, 'an agent was started');
    assert.deepEqual(await snapshot(db, 'nobody'), {});
    const missing = run(['--db', join(tmp.dir, 'missing.db'), 's1']);
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(missing.stderr, /missing\.db does not exist/);
    const notes = join(tmp.dir, 'notes.txt');
    writeFileSync(notes, 'not a database, not at all; '.repeat(200));
    const text = run([notes, 's1']);
    assert.equal(text.code, 4, text.stderr);
    assert.match(text.stderr, /notes\.txt is not a SQLite database/);
    assert.equal(existsSync(marker), false, 'an agent was started');
  });

  it('a run that fails before its agent starts prints no header naming an agent or a branch it never ran on', () => {
    for (const [args, failure] of [
      [['--from-turn', '9'], /^Failed: Turn 9 does not contain a user message in branch 'main'\n/],
      [['--from-turn', '2', '--name', 'new-one', '--branch', 'ghost'], /^Failed: Branch 'ghost' does not exist/],
      [['--branch', 'ghost'], /^Failed: Branch 'ghost' does not exist/],
    ] as const) {
      const r = run([db, 's1', ...args]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, failure);
      assert.doesNotMatch(r.stdout, /on branch '/);
    }
    assert.equal(existsSync(marker), false, 'an agent was started');
  });
});

describe('agent-sessions run: the exit code of its outcomes', () => {
  const done = completedRun('a');
  const paused = pausedRun('b', 'Kept your message.', [{ text: 'Send the email?', toolCallId: 'call_send' }]);
  const failed = failedBeforeWriting('c', 'tool', 'A tool failed.', 'Nothing was written.');
  const stopped = failedBeforeWriting('d', 'cancelled', 'The run was stopped.', 'Nothing was written.');

  it('is 0 when every run completed, 7 when one paused and the others completed, 1 when one failed or was stopped', () => {
    assert.equal(runExitCode([done]), 0);
    assert.equal(runExitCode([paused]), 7);
    assert.equal(runExitCode([done, paused]), 7);
    assert.equal(runExitCode([failed]), 1);
    assert.equal(runExitCode([paused, failed]), 1, 'a failure wins over a pause');
    assert.equal(runExitCode([paused, stopped]), 1, 'a Stop wins over a pause');
  });
});

describe("agent-sessions run: the fork's default name", () => {
  it('differs for runs started a millisecond apart, within one second and across one', () => {
    for (const t of [Date.UTC(2026, 11, 5, 9, 0, 0, 0), Date.UTC(2026, 11, 5, 9, 0, 0, 998)]) {
      assert.notEqual(defaultForkName(null, t), defaultForkName(null, t + 1));
      assert.notEqual(defaultForkName('gpt-5', t), defaultForkName('gpt-5', t + 1));
    }
    assert.match(defaultForkName(null, Date.UTC(2026, 11, 5)), /^retry-[0-9a-z]+$/);
    assert.match(defaultForkName('gpt-5', Date.UTC(2026, 11, 5)), /^retry-gpt-5-[0-9a-z]+$/);
  });
});
