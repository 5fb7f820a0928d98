/** The `agent-sessions` CLI built for a test: esbuild with the options of dist/cli.js, into the test's own folder. */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = join(__dirname, '..', '..');

/** Builds `agent-sessions` into `outfile`, one self-contained file (better-sqlite3 found through NODE_PATH). */
export async function buildCli(outfile: string): Promise<void> {
  const { cliBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'store-package', 'cliBuild.mjs')).href)) as {
    cliBuildOptions: (outfile: string) => esbuild.BuildOptions;
  };
  await esbuild.build(cliBuildOptions(outfile));
}
