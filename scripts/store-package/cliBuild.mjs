// The esbuild options of the `agent-sessions` CLI bundle (src/cli/main.ts), shared by the repository build
// (esbuild.mjs → dist/cli.js), the store package (scripts/packStore.mjs → dist/cli.cjs, the package's `bin`) and the
// CLI tests (which build it into a temporary folder and run it as a child process).
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenizerTablesPacked } from '../tokenizerTables.mjs';
import { vendorImports } from '../vendorBundles.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * esbuild options writing the CLI to `outfile` (CommonJS, Node 20, a shebang, drivers and pg/ioredis external). With
 * `codeCache: true`, `outfile` is a loader of a few kilobytes (src/cli/cliLoader.ts) and the CLI is `cliMain.js` beside
 * it, loaded through V8's code cache (issue 43: the compile was about a fifth of `run`'s start). With
 * `serverDrivers: true`, pg and ioredis are bundled: the extension's VSIX ships dist/cli.js for its MCP server and has
 * no node_modules to load them from (the store package depends on them instead). With `vendorDir` (relative to
 * `outfile`'s folder, `./vendor/`), the heavy packages are required from the bundles `vendorBuildOptions` writes
 * there (scripts/vendorBundles.mjs) when a command first needs them; without it, one self-contained file.
 */
export function cliBuildOptions(outfile, { minify = false, sourcemap = false, serverDrivers = false, vendorDir, codeCache = false } = {}) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const main = join(root, 'src', 'cli', 'main.ts');
  return {
    ...(codeCache
      ? {
          entryPoints: { [basename(outfile, '.js')]: join(root, 'src', 'cli', 'cliLoader.ts'), cliMain: main },
          outdir: dirname(outfile),
        }
      : { entryPoints: [main], outfile }),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify,
    sourcemap,
    keepNames: true,
    external: ['better-sqlite3', '@openai/agents', ...(serverDrivers ? [] : ['pg', 'ioredis'])],
    banner: { js: '#!/usr/bin/env node' },
    define: { __CLI_VERSION__: JSON.stringify(version) },
    logLevel: 'warning',
    plugins: vendorDir
      ? [vendorImports(vendorDir, ['zod', 'openai', 'agUi', 'mcp', 'o200k', 'cl100k', ...(serverDrivers ? ['pg', 'ioredis'] : [])])]
      : // One file: the tokenizer's tables in it packed, as the vendor bundles hold them.
        [tokenizerTablesPacked()],
  };
}
