/**
 * `agent-sessions` as dist/cli.js (the repository's build and the VSIX's MCP server): a loader of a few kilobytes that
 * loads the command line itself, dist/cliMain.js (built from main.ts), through V8's code cache (issue 43, the CLI's
 * own start: compiling the 0.6 MB bundle was about a fifth of `run`'s CPU before its agent started), then runs it.
 * The cache never decides whether the command runs: a folder that cannot be used, a cache that cannot be read or
 * written or that V8 refuses only costs the compile. The store package's `bin` is the same loader, dist/cli.cjs, of its
 * own dist/cliMain.cjs (scripts/store-package/cliBuild.mjs names the file at build time).
 */
import { join } from 'node:path';
import { loadWithCodeCache } from '../store/files/codeCache';
import { codeCacheDir } from './codeCacheDir';
import { COMMAND_HELP } from './help';
import { exitWhenStdoutCloses } from './stdoutClosed';

interface CliMain {
  runCli(argv: string[]): Promise<number>;
}

/** The CLI's file name beside this loader, set by the build (`cliMain.js`; the store package's `cliMain.cjs`). */
declare const __CLI_MAIN__: string;
const mainFile = join(__dirname, __CLI_MAIN__);
let dir: string | undefined;
try {
  // AGENT_SESSIONS_CODE_CACHE=off: compile every time, write nothing (a read-only or audited machine).
  dir = process.env.AGENT_SESSIONS_CODE_CACHE === 'off' ? undefined : codeCacheDir();
} catch {
  dir = undefined;
}
exitWhenStdoutCloses();
// A cache per command (V8 keeps only the code that ran): the command named first, as `agent-sessions run …` names it;
// any other first argument shares one cache, so what a user types never adds files.
const first = process.argv[2] ?? '';
const variant = Object.hasOwn(COMMAND_HELP, first) ? first : undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const main = (dir === undefined ? require(mainFile) : loadWithCodeCache(mainFile, dir, { writeAfter: 'exit', variant }).exports) as CliMain;
void main.runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
