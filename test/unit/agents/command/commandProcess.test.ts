/**
 * Stop always stops (src/agents/command/commandProcess.ts, docs/agent-command.md §5): real processes that ignore
 * SIGINT and SIGTERM, under a shell that forks them (dash does not exec the command), with children of their own.
 * The run ends within the escalation's deadline and no process of the group survives it, whatever the shell did.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  runCommandProcess,
  runningCommandCount,
  stopAllCommandProcesses,
  type ProcessEnd,
} from '../../../../src/agents/command/commandProcess';
import { alive, pidsOf, stubbornAgent } from './processKit';
import { nodeCommand } from './commandKit';
import { launcherThreadForTests, useLauncherThread } from '../../../../src/agents/command/launcher';
import { ROOT } from '../../store/export/exportFixtures';

describe('agent command processes: stop always stops', function () {
  this.timeout(15_000);
  const GRACE = 300;
  let dir: string;
  let pidFile: string;
  let started: number[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'asi-stop-'));
    pidFile = join(dir, 'pids.txt');
    started = [];
  });
  afterEach(() => {
    // A failing test must not leave its processes behind either.
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  async function runAndWatch(options: { timeoutMs?: number; signal?: AbortSignal; command: string; n: number }) {
    const lines: string[] = [];
    const t0 = Date.now();
    const ended = runCommandProcess({
      command: options.command,
      env: { PATH: process.env.PATH ?? '' },
      stdin: '{}',
      onLine: (l) => void lines.push(l),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      graceMs: GRACE,
    });
    started = await pidsOf(pidFile, options.n);
    return { ended, t0, lines };
  }

  it('a command that ignores SIGINT and SIGTERM past its timeout gets SIGKILL on its whole group, and the run ends', async () => {
    // Long enough for both processes of the group to start and write their pids first: with 300 ms, a loaded machine
    // (the full suite, two phases at a time) killed the group before the child had started, and the test saw one pid.
    const timeoutMs = 2000;
    const { ended, t0 } = await runAndWatch({ command: stubbornAgent(dir, pidFile), timeoutMs, n: 2 });
    const end: ProcessEnd = await ended;
    const took = Date.now() - t0;
    assert.equal(end.stoppedBy, 'timeout');
    // timeout + SIGTERM after one grace + SIGKILL after another, and a little for the pipes.
    assert.ok(took >= timeoutMs, `the run ended before its timeout, after ${took} ms`);
    assert.ok(took < timeoutMs + 2 * GRACE + 1500, `the run took ${took} ms`);
    assert.deepEqual(
      started.filter((p) => alive(p)),
      [],
      'a process of the group outlived the run',
    );
    assert.equal(runningCommandCount(), 0);
  });

  it('Stop (an abort) reaches the whole group the same way', async () => {
    const controller = new AbortController();
    const { ended, t0 } = await runAndWatch({ command: stubbornAgent(dir, pidFile), signal: controller.signal, n: 2 });
    const stopAt = Date.now();
    controller.abort();
    const end = await ended;
    assert.equal(end.stoppedBy, 'stop');
    assert.ok(Date.now() - stopAt < 2 * GRACE + 1500, `the stop took ${Date.now() - stopAt} ms (run ${Date.now() - t0} ms)`);
    assert.deepEqual(
      started.filter((p) => alive(p)),
      [],
    );
  });

  it('the run ends when the shell has exited though a child of it still holds stdout open, and the child is stopped', async () => {
    const { ended, t0, lines } = await runAndWatch({ command: stubbornAgent(dir, pidFile, 200), n: 2 });
    const end = await ended;
    const took = Date.now() - t0;
    // The shell's own end is the run's: exit code 0, not stopped by us.
    assert.equal(end.code, 0);
    assert.equal(end.stoppedBy, undefined);
    assert.deepEqual(lines, [JSON.stringify({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' })]);
    assert.ok(took < 200 + 3 * GRACE + 1500, `the run took ${took} ms`);
    assert.deepEqual(
      started.filter((p) => alive(p)),
      [],
    );
  });

  it('stopping every command (the extension deactivating) ends each run and its group within the grace given', async () => {
    const { ended } = await runAndWatch({ command: stubbornAgent(dir, pidFile), n: 2 });
    assert.equal(runningCommandCount(), 1);
    const t0 = Date.now();
    await stopAllCommandProcesses(100);
    assert.ok(Date.now() - t0 < 200 + 1500, `took ${Date.now() - t0} ms`);
    assert.equal((await ended).stoppedBy, 'stop');
    assert.deepEqual(
      started.filter((p) => alive(p)),
      [],
    );
    assert.equal(runningCommandCount(), 0);
  });

  it('a process exiting just after starting an agent on the launcher thread kills it, though its pid never came as a message', async () => {
    // The launcher thread spawns; this thread is kept busy until the agent has written its pid, then exits: the
    // 'spawned' message is never read, and the exit hook finds the pid where the launcher thread stored it.
    const pids = join(dir, 'agent-pid');
    const script = join(dir, 'exits.ts');
    const source = join(ROOT, 'src', 'agents', 'command');
    writeFileSync(
      script,
      `import { existsSync } from 'node:fs';
       import { useLauncherThread } from ${JSON.stringify(join(source, 'launcher.ts'))};
       import { runCommandProcess } from ${JSON.stringify(join(source, 'commandProcess.ts'))};
       useLauncherThread();
       void runCommandProcess({ command: ${JSON.stringify(`echo $$ > '${pids}'; exec sleep 30`)}, env: process.env, stdin: '', onLine: () => undefined });
       const until = Date.now() + 10_000;
       while (!existsSync(${JSON.stringify(pids)}) && Date.now() < until) {}
       process.exit(0);`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const pid = Number(readFileSync(pids, 'utf8').trim());
    started = [pid];
    for (let i = 0; i < 40 && alive(pid); i++) await new Promise((res) => setTimeout(res, 25));
    assert.equal(alive(pid), false, 'the agent outlived the process that started it');
  });

  it('the launcher thread failing mid-run ends the run and stops its whole group, saying why', async () => {
    useLauncherThread();
    const { ended } = await runAndWatch({ command: stubbornAgent(dir, pidFile), n: 2 });
    // As a crash of the thread would: its pipes to the agent close with it.
    await launcherThreadForTests()!.terminate();
    const end = await ended;
    assert.match(end.spawnError ?? '', /the agent launcher stopped/);
    assert.deepEqual(
      started.filter((p) => alive(p)),
      [],
      'a process of the group outlived the run',
    );
    assert.equal(runningCommandCount(), 0);
    // The next launch gets a thread again.
    useLauncherThread();
    assert.ok(launcherThreadForTests());
  });

  it('a stderr line over its bound is left out and a note says so, in its place', async () => {
    const command = nodeCommand(dir, 'noisy.js', `process.stderr.write('first\\n' + 'e'.repeat(70000) + '\\nlast\\n');`);
    const lines: string[] = [];
    await runCommandProcess({
      command,
      env: { PATH: process.env.PATH ?? '' },
      stdin: '',
      onLine: () => undefined,
      onStderr: (l) => void lines.push(l),
    });
    assert.deepEqual(lines, ['first', '[a line longer than 65,536 characters was left out]', 'last']);
  });

  it('a command printing faster than we read waits on its pipe: what is read and not yet taken stays bounded', async () => {
    // 48 MiB in 1 KiB lines, then a marker file once every byte was accepted by the pipe. While this thread is busy
    // the launcher thread (launcher.ts) may read ahead only MAX_OUTPUT_IN_FLIGHT_CHARS: the rest waits in the
    // agent, so the marker cannot exist yet. Without the bound the launcher reads all of it into our memory.
    const marker = join(dir, 'all-written');
    const command = nodeCommand(
      dir,
      'flood.js',
      `const line = 'x'.repeat(1023) + '\\n';
       const block = line.repeat(1024);
       let n = 0;
       (function more() {
         while (n < 48) { n++; if (!process.stdout.write(block)) return process.stdout.once('drain', more); }
         process.stdout.write('', () => require('fs').writeFileSync(${JSON.stringify(marker)}, ''));
       })();`,
    );
    let lines = 0;
    let blocked: boolean | undefined;
    const end = await runCommandProcess({
      command,
      env: { PATH: process.env.PATH ?? '' },
      stdin: '',
      onLine: (l) => {
        if (lines++ > 0 || l.length !== 1023) return;
        // Busy, as the check's thread can be; long enough for a pipe that is read freely to take all 48 MiB.
        const until = Date.now() + 1500;
        while (Date.now() < until) {
          /* spin */
        }
        blocked = !existsSync(marker);
      },
    });
    assert.equal(end.code, 0);
    assert.equal(blocked, true, 'the agent wrote everything while we took nothing: the launcher read it all ahead');
    assert.equal(lines, 48 * 1024);
    assert.ok(existsSync(marker));
  });

  it('a stdout line longer than the bound is discarded as it arrives; the lines around it are read', async () => {
    const command = nodeCommand(
      dir,
      'long.js',
      `process.stdout.write('before\\n' + 'x'.repeat(5000) + '\\nafter\\n' + 'y'.repeat(999) + '\\n');`,
    );
    const lines: string[] = [];
    const end = await runCommandProcess({
      command,
      env: { PATH: process.env.PATH ?? '' },
      stdin: '',
      onLine: (l) => void lines.push(l),
      maxLineChars: 1000,
    });
    assert.equal(end.overlongLines, 1);
    assert.deepEqual(lines, ['before', 'after', 'y'.repeat(999)]);
  });
});
