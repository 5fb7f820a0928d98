/** Runs a TypeScript support script in a child Node process (same Node, same driver environment), with a time limit. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

export interface ChildRun {
  child: ChildProcessWithoutNullStreams;
  /** Settles when the child exits, or after `timeoutMs` when it is killed (then `timedOut` is true). */
  done: Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }>;
  /** Resolves with the first stdout line equal to `line`. */
  waitForLine(line: string): Promise<void>;
}

const ROOT = join(__dirname, '..', '..');

/** Starts `node --import tsx <script> ...args` from the repository root; `script` is relative to test/support. */
export function runSupportScript(script: string, args: readonly string[], timeoutMs: number): ChildRun {
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', join(__dirname, script), ...args], {
    cwd: ROOT,
    env: process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  const waiters: { line: string; resolve: () => void }[] = [];
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    const lines = new Set(stdout.split('\n'));
    for (const w of waiters.splice(0)) {
      if (lines.has(w.line)) w.resolve();
      else waiters.push(w);
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
  return {
    child,
    done,
    waitForLine: (line) =>
      new Promise<void>((resolve, reject) => {
        if (stdout.split('\n').includes(line)) return resolve();
        waiters.push({ line, resolve });
        void done.then((r) => reject(new Error(`the child exited (${r.code}) before printing '${line}': ${r.stderr}`)));
      }),
  };
}
