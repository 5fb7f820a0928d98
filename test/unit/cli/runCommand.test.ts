/**
 * `agent-sessions run`, from the real CLI bundle as a child process: a what-if on two models through the Python
 * fixture command (python_turn.py), its events as JSON lines, the rows it left; a failing command's exit code.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { RunEvent } from '../../../src/shared/protocol/runEvents';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { readBranch, seedSession } from '../agents/agentTestKit';
import { PYTHON_TURN } from '../agents/command/commandKit';
import { defaultForkName } from '../../../src/cli/runCommand';
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

  it('refuses a run without exactly one of --command and --url', () => {
    const r = run(['run', db, 's1', '--message', 'x']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /run needs exactly one of --command and --url/);
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
