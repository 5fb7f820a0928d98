/**
 * Runs `agent-sessions` in this process (`runCli`) with stdout and stderr captured, no pager and no colour: what a
 * CLI test reads.
 */
import { runCli } from '../../src/cli/main';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCliCaptured(...args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  // The terminal waits for each write's callback (stdout's back-pressure): call it, as a stream would.
  const capture = (into: string[]) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(String(chunk));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  try {
    const code = await runCli([...args, '--no-pager', '--no-color']);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
}
