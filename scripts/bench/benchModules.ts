/**
 * Where the bench finds the store worker and the store library for the threads and processes it starts: the bundles
 * beside `dist/bench.js` when it runs built (`npm run bench`), the sources through tsx when it runs from source
 * (`npx tsx scripts/bench.ts`), so every section measures the same code either way.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** True when running as the `dist/bench.js` bundle (its siblings are the other bundles). */
const BUNDLED = existsSync(join(__dirname, 'storeWorker.js'));
/** The repository root when running from source (`scripts/bench/` is two levels down). */
const ROOT = join(__dirname, '..', '..');

/** The store worker's file and the `execArgv` its thread needs (tsx's loader from source). */
export function storeWorkerModule(): { file: string; execArgv: string[] | undefined } {
  return BUNDLED
    ? { file: join(__dirname, 'storeWorker.js'), execArgv: undefined }
    : { file: join(ROOT, 'src', 'store', 'worker', 'storeWorker.ts'), execArgv: ['--require', 'tsx/cjs'] };
}

/** The store library's entry for `require` in another process. */
export function storeLibraryModule(): string {
  return BUNDLED ? join(__dirname, 'store.js') : join(ROOT, 'src', 'store', 'index.ts');
}

/**
 * Runs `code` (CommonJS, `STORE` bound to the store library) in another Node process, as another program writing the
 * file would: resolves with its exit once it ends; `onLine` hears each line it prints.
 */
export function runInOtherProcess(
  code: string,
  args: readonly string[],
  onLine?: (line: string) => void,
): Promise<{ code: number | null; stderr: string }> {
  const prelude = `const STORE = require(${JSON.stringify(storeLibraryModule())});\n`;
  const child = spawn(process.execPath, [...(BUNDLED ? [] : ['--require', 'tsx/cjs']), '-e', prelude + code, '--', ...args], {
    cwd: BUNDLED ? __dirname : ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      onLine?.(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}
