/**
 * Commands that start agents (`run`, `check`) run so that the agents end with the CLI. Killed (a CI job's timeout, a
 * closed terminal), the CLI would end without its 'exit' handlers and leave the agents, each in a process group of its
 * own, running with ppid 1: they are killed first, then the signal is raised again so the CLI ends as it would have.
 * Ctrl+C is a Stop (main.ts aborts the command's runs, and their stop's escalation ends them within 10 s); a second
 * Ctrl+C does not wait: SIGKILL at once.
 */
import { killAllCommandProcesses } from '../agents/command/commandProcess';

export interface InterruptWords {
  /** Said at the first Ctrl+C (nothing when absent). */
  first?: string;
  /** Said at the second, when the agents are killed. */
  kill: string;
}

export async function agentsEndWithUs<T>(run: () => Promise<T>, words: InterruptWords): Promise<T> {
  let interrupts = 0;
  const onInterrupt = () => {
    if (++interrupts === 2) {
      process.stderr.write(`${words.kill}\n`);
      killAllCommandProcesses();
    } else if (interrupts === 1 && words.first) process.stderr.write(`${words.first}\n`);
  };
  const onKill = (signal: NodeJS.Signals) => {
    killAllCommandProcesses();
    off();
    process.kill(process.pid, signal);
  };
  const off = () => {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onKill);
    process.off('SIGHUP', onKill);
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onKill);
  process.on('SIGHUP', onKill);
  try {
    return await run();
  } finally {
    off();
  }
}
