/**
 * `agent-sessions run` from the real CLI bundle as a child process, with Node agent commands (no Python needed): an
 * agent that ignores SIGINT and SIGTERM is stopped at --timeout and by Ctrl+C (SIGINT to the CLI), the CLI ends within
 * the stop's deadline (5 s a signal) and no process of the agent's group outlives it, nor a CLI killed by SIGTERM or
 * SIGHUP; and OPENAI_API_KEY, streamed in halves, never reaches stdout (as text or --json) or stderr.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { TEST_KEY, seedSession } from '../agents/agentTestKit';
import { nodeCommand } from '../agents/command/commandKit';
import { alive, pidsOf, stubbornAgent } from '../agents/command/processKit';
import type { RunEvent } from '../../../src/shared/protocol/runEvents';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';

/** The CLI's stop gives each signal 5 s (commandProcess.ts): SIGINT, SIGTERM, then SIGKILL. */
const CLI_GRACE_MS = 5000;

describe('agent-sessions run (the real binary, Node agent commands): stop always stops, the key never shows', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-cli-stop-');
  const cli = sharedCliPath();
  const db = join(tmp.dir, 'conversations.db');
  const started: number[] = [];

  before(async () => {
    await buildSharedCli();
    await seedSession(db, [['Weather in Paris?', 'Mild.']]);
  });
  after(() => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    tmp.cleanup();
  });

  /** Starts the CLI; `done` resolves with its exit and output, and how long it ran. */
  function start(args: string[], env: NodeJS.ProcessEnv = {}) {
    const t0 = Date.now();
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: tmp.dir,
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '1', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const done = new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 })),
    );
    return { child, done };
  }

  it('--timeout and Ctrl+C each stop an agent that ignores SIGINT and SIGTERM, with its children, and the CLI ends', async () => {
    const timedPids = join(tmp.dir, 'timed.pids');
    const timed = start([
      'run',
      db,
      's1',
      '--command',
      stubbornAgent(tmp.dir, timedPids, undefined, 'timed.js'),
      '-m',
      'hi',
      '--timeout',
      '1',
    ]);
    const interruptedPids = join(tmp.dir, 'interrupted.pids');
    const interrupted = start([
      'run',
      db,
      's1',
      '--branch',
      'main',
      '--from-turn',
      '1',
      '--name',
      'ctrl-c',
      '--command',
      stubbornAgent(tmp.dir, interruptedPids, undefined, 'interrupted.js'),
      '-m',
      'hi',
    ]);
    const timedGroup = await pidsOf(timedPids, 2);
    const interruptedGroup = await pidsOf(interruptedPids, 2);
    started.push(...timedGroup, ...interruptedGroup);

    const sigintAt = Date.now();
    interrupted.child.kill('SIGINT');
    const [t, i] = await Promise.all([timed.done, interrupted.done]);

    assert.equal(t.code, 1, t.stderr);
    assert.match(t.stdout, /Failed: The agent command '.*' ran past the 1 s timeout and was stopped\./);
    assert.ok(t.ms < 1000 + 2 * CLI_GRACE_MS + 3000, `the CLI ran ${t.ms} ms`);
    assert.deepEqual(timedGroup.filter(alive), [], 'a process of the timed-out agent outlived the CLI');

    assert.equal(i.code, 1, i.stderr);
    assert.match(i.stdout, /Stopped: The run was stopped\./);
    const afterSigint = Date.now() - sigintAt;
    assert.ok(afterSigint < 2 * CLI_GRACE_MS + 3000, `the CLI ended ${afterSigint} ms after Ctrl+C`);
    assert.deepEqual(interruptedGroup.filter(alive), [], 'a process of the interrupted agent outlived the CLI');
  });

  it('a second Ctrl+C does not wait for the escalation: SIGKILL at once', async () => {
    const pids = join(tmp.dir, 'twice.pids');
    const cliRun = start(['run', db, 's1', '--command', stubbornAgent(tmp.dir, pids, undefined, 'twice.js'), '-m', 'hi']);
    const group = await pidsOf(pids, 2);
    started.push(...group);
    cliRun.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    cliRun.child.kill('SIGINT');
    const r = await cliRun.done;
    assert.ok(Date.now() - t0 < 3000, `the CLI ended ${Date.now() - t0} ms after the second Ctrl+C`);
    assert.match(r.stdout, /Stopped: The run was stopped\./);
    assert.match(r.stderr, /Stopping the agent now \(SIGKILL\)\./);
    assert.deepEqual(group.filter(alive), []);
  });

  it('a CLI killed by SIGTERM or SIGHUP (a CI timeout, a closed terminal) takes its agents with it', async () => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      const pids = join(tmp.dir, `${signal}.pids`);
      const cliRun = start(['run', db, 's1', '--command', stubbornAgent(tmp.dir, pids, undefined, `${signal}.js`), '-m', 'hi']);
      const group = await pidsOf(pids, 2);
      started.push(...group);
      cliRun.child.kill(signal);
      await cliRun.done;
      assert.equal(cliRun.child.signalCode, signal, 'the CLI ends by the signal, as it would have without agents');
      // SIGKILL was sent before the CLI ended; the kernel takes a moment to end them.
      for (let i = 0; i < 40 && group.some(alive); i++) await new Promise((r) => setTimeout(r, 25));
      assert.deepEqual(group.filter(alive), [], `a process of the agent outlived the CLI killed by ${signal}`);
    }
  });

  it('OPENAI_API_KEY sent in two text deltas and across two stderr lines never shows, whole or in halves', async () => {
    const command = nodeCommand(
      tmp.dir,
      'leaks.js',
      `const k = process.env.OPENAI_API_KEY; const a = k.slice(0, 15), b = k.slice(15);
       const out = (e) => console.log(JSON.stringify(e));
       out({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' });
       out({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'key: ' + a });
       out({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: b + ' (shown)' });
       console.error('using ' + a);
       console.error(b + ' now');
       process.exit(2);`,
    );
    for (const json of [false, true]) {
      const r = await start(['run', db, 's1', '--command', command, '-m', 'hi', ...(json ? ['--json'] : [])], { OPENAI_API_KEY: TEST_KEY })
        .done;
      assert.equal(r.code, 1, r.stderr);
      const shown = r.stdout + r.stderr;
      for (let n = 0; n + 8 <= TEST_KEY.length; n++)
        assert.ok(
          !shown.includes(TEST_KEY.slice(n, n + 8)),
          `'${TEST_KEY.slice(n, n + 8)}' of the key shows${json ? ' with --json' : ''}:\n${shown}`,
        );
      const text = json
        ? r.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as RunEvent)
            .map((e) => (e.kind === 'text/delta' ? e.delta : ''))
            .join('')
        : r.stdout;
      assert.match(text, /key: \[redacted\] \(shown\)/);
      assert.match(r.stderr, /using \[redacted\]/);
    }
  });
});
