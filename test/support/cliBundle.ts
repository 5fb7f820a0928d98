/** The `agent-sessions` CLI built for the tests: esbuild with the options of dist/cli.js, once per test process. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = join(__dirname, '..', '..');

/** Builds `agent-sessions` into `outfile`, one self-contained file (better-sqlite3 found through NODE_PATH). */
async function buildCli(outfile: string): Promise<void> {
  const { cliBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'store-package', 'cliBuild.mjs')).href)) as {
    cliBuildOptions: (outfile: string) => esbuild.BuildOptions;
  };
  await esbuild.build(cliBuildOptions(outfile));
}

let shared: { path: string; built?: Promise<void> } | undefined;

function sharedCli(): { path: string; built?: Promise<void> } {
  if (!shared) {
    const dir = mkdtempSync(join(tmpdir(), 'asi-shared-cli-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    shared = { path: join(dir, 'cli.js') };
  }
  return shared;
}

/**
 * The path of the plain CLI this test process shares (`buildSharedCli` builds it). The suites that run the CLI as
 * `buildCli` builds it, with nothing of their own beside it, take this one: each built its own copy of the same 8 MB
 * bundle before, 1.1–1.6 s a build on the project's 2-core VM, a dozen times a run. Removed when the process exits.
 */
export function sharedCliPath(): string {
  return sharedCli().path;
}

/** Builds the shared CLI (`sharedCliPath`) once per process; a failed build is tried again by the next caller. */
export function buildSharedCli(): Promise<string> {
  const s = sharedCli();
  s.built ??= buildCli(s.path).catch((e: unknown) => {
    s.built = undefined;
    throw e;
  });
  return s.built.then(() => s.path);
}
