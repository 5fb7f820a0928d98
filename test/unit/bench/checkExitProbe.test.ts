/**
 * The check bench's exit probe (scripts/bench/check.ts, issue 42): an agent's exit is when its process ended, not when
 * Node closed its handles (the probe's connection closes then, before the rest of its teardown). The exit taken is
 * never after the real one, and a process gone before it could be seen alive has no exit time at all.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitProbe, type ExitProbe } from '../../../scripts/bench/check';

/** Blocks this thread for `ms`. */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning on purpose
  }
}

/**
 * A process that connects to the probe, closes the connection itself, then runs on for `lingerMs`; resolves with its
 * pid and the time this process heard of its exit.
 */
function closeThenLinger(probe: ExitProbe, lingerMs: number): Promise<{ pid: number; exitHeard: number }> {
  const source = `
const s = require('node:net').connect(${JSON.stringify(probe.path)}, () => {
  s.end(process.pid + '\\n', () => {
    s.destroy();
    const until = Date.now() + ${lingerMs};
    const spin = () => (Date.now() < until ? setImmediate(spin) : process.exit(0));
    spin();
  });
});`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', source], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve({ pid: child.pid!, exitHeard: performance.timeOrigin + performance.now() }));
  });
}

const linux = process.platform === 'linux';

describe('bench: the check bench sees an agent exit when its process ends', () => {
  let dir: string;
  let probe: ExitProbe;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exit-probe-'));
    probe = await exitProbe(join(dir, 'exit.sock'));
  });
  afterEach(async () => {
    await probe.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the exit after the connection closed, while the process still ran, and never after its end', async function () {
    if (!linux) this.skip(); // /proc: elsewhere the close is the exit, which this test would rightly fail
    const { pid, exitHeard } = await closeThenLinger(probe, 150);
    await probe.settled();
    const closed = probe.closed.get(pid);
    const exited = probe.seen.get(pid);
    assert.ok(closed !== undefined && exited !== undefined, 'the close and the exit are both known');
    assert.ok(exited - closed >= 100, `the 150 ms the process ran after its close count as its own (got ${exited - closed} ms)`);
    assert.ok(exited <= exitHeard, 'the exit taken is not after the process ended');
  });

  it('gives no exit time for a process already gone when its close is heard', async function () {
    if (!linux) this.skip();
    const source = `const s = require('node:net').connect(${JSON.stringify(probe.path)}, () => s.write(process.pid + '\\n', () => process.exit(0)));`;
    const child = spawn(process.execPath, ['-e', source], { stdio: 'ignore' });
    // This thread is busy while the process connects, writes and exits: the close is heard after its end.
    block(1500);
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    for (let i = 0; i < 50 && !probe.closed.has(child.pid!); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await probe.settled();
    assert.ok(probe.closed.has(child.pid!), 'the close was heard');
    assert.equal(probe.seen.has(child.pid!), false, 'no time it was seen alive after its close');
  });
});
