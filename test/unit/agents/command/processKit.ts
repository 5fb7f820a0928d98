/**
 * Helpers for tests of stopping agent commands: an agent that ignores the polite signals and has a child of its own,
 * the pids it reports, and whether a process is still alive.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { nodeCommand } from './commandKit';

/** Alive and not a zombie waiting for a parent that will never reap it (PID 1 here may not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // Without /proc (macOS) a zombie cannot be told apart: it counts as alive, so the check can only be stricter.
  if (!existsSync('/proc/self/stat')) return true;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * A Node agent that ignores SIGINT and SIGTERM and starts a child that ignores them too; both write their pids to
 * `pids` (the child holds the agent's stdout open). With `exitAfterMs` the agent itself exits then, leaving the child.
 */
export function stubbornAgent(dir: string, pids: string, exitAfterMs?: number, name = 'stubborn.js'): string {
  const child = `process.on('SIGINT', () => {}); process.on('SIGTERM', () => {}); require('fs').appendFileSync(${JSON.stringify(pids)}, process.pid + '\\n'); setInterval(() => {}, 1000);`;
  return nodeCommand(
    dir,
    name,
    `process.on('SIGINT', () => console.error('ignoring SIGINT'));
     process.on('SIGTERM', () => console.error('ignoring SIGTERM'));
     require('fs').appendFileSync(${JSON.stringify(pids)}, process.pid + '\\n');
     require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: 'inherit' });
     console.log(JSON.stringify({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' }));
     ${exitAfterMs !== undefined ? `setTimeout(() => process.exit(0), ${exitAfterMs});` : ''}
     setInterval(() => {}, 1000);`,
  );
}

/** The pids written to `file` once there are `n` of them. */
export async function pidsOf(file: string, n: number): Promise<number[]> {
  for (let i = 0; i < 200; i++) {
    const pids = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
    if (pids.length >= n) return pids;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`fewer than ${n} pids in ${file}`);
}
