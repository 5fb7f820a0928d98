/**
 * Commands that start agents (`run`, `check`) run so that the agents end with the CLI. Killed (a CI job's timeout, a
 * closed terminal), the CLI would end without its 'exit' handlers and leave the agents, each in a process group of its
 * own, running with ppid 1: they are killed first, then the signal is raised again so the CLI ends as it would have.
 * Ctrl+C is a Stop (main.ts aborts the command's runs, and their stop's escalation ends them within 10 s); a second
 * Ctrl+C does not wait: SIGKILL at once.
 *
 * A command with something to finish when it is stopped (`check`: its reports, its scratch folder) passes `stop`:
 * SIGTERM and SIGHUP are then a Stop as Ctrl+C is — `stop` is told which signal came, the command stops its runs,
 * finishes, and raises that signal again itself (`raiseAgain`) — and any second signal kills the agents at once.
 */
import { killAllCommandProcesses } from '../agents/command/commandProcess';

export interface InterruptWords {
  /** Said at the first Ctrl+C (nothing when absent). */
  first?: string;
  /** Said at the second, when the agents are killed. */
  kill: string;
  /**
   * Makes SIGTERM and SIGHUP a Stop: called at the first of them (the command stops its runs and, once it has
   * finished, ends by that signal with `raiseAgain`). Without it, they kill the agents and end the CLI at once.
   */
  stop?: (signal: NodeJS.Signals) => void;
  /** Said at that first SIGTERM or SIGHUP, after the signal's name. */
  stopping?: string;
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
    if (words.stop) {
      // A Stop like Ctrl+C's (a second signal of either kind kills the agents at once).
      if (++interrupts === 1) {
        process.stderr.write(`${signal}: ${words.stopping ?? 'stopping'}\n`);
        words.stop(signal);
      } else if (interrupts === 2) {
        process.stderr.write(`${words.kill}\n`);
        killAllCommandProcesses();
      }
      return;
    }
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

/**
 * Ends the CLI by `signal`, as the shell and a CI runner expect of a process it signalled (`timeout` reports 124, a
 * shell 128 + N): once no handler of ours is listening for it any more, its default action ends the process.
 */
export function raiseAgain(signal: NodeJS.Signals): void {
  killAllCommandProcesses();
  process.kill(process.pid, signal);
}
