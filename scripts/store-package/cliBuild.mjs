// The esbuild options of the `agent-sessions` CLI bundle (src/cli/main.ts), shared by the repository build
// (esbuild.mjs → dist/cli.js), the store package (scripts/packStore.mjs → dist/cli.cjs, the package's `bin`) and the
// CLI tests (which build it into a temporary folder and run it as a child process).
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenizerTablesPacked } from '../tokenizerTables.mjs';
import { vendorImports } from '../vendorBundles.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The vendor groups (scripts/vendorBundles.mjs) the CLI requires with `vendorDir`; pg and ioredis with `serverDrivers`. */
export function cliVendorGroups(serverDrivers = false) {
  return ['zod', 'openai', 'agUi', 'mcp', 'o200k', 'cl100k', ...(serverDrivers ? ['pg', 'ioredis'] : [])];
}

/**
 * esbuild options writing the CLI to `outfile` (CommonJS, Node 20, a shebang, drivers and pg/ioredis external). With
 * `codeCache: true`, `outfile` is a loader of a few kilobytes (src/cli/cliLoader.ts) and the CLI is `cliMain` beside
 * it with `outfile`'s extension (`cliMain.js`; the store package's `cliMain.cjs`), loaded through V8's code cache
 * (issue 43: the compile was about a fifth of `run`'s start). A cache file is named after the CLI's file, so the
 * package's CLI and the VSIX's (dist/cli.js) keep caches side by side instead of each removing the other's as an
 * older build. With `serverDrivers: true`, pg and ioredis are bundled: the extension's VSIX ships dist/cli.js for its
 * MCP server and has no node_modules to load them from (the store package depends on them instead). With `vendorDir`
 * (relative to `outfile`'s folder, `./vendor/`), the heavy packages are required from the bundles `vendorBuildOptions`
 * writes there (scripts/vendorBundles.mjs, the groups `cliVendorGroups` names) when a command first needs them;
 * without it, one self-contained file (what the CLI tests build).
 */
export function cliBuildOptions(outfile, { minify = false, sourcemap = false, serverDrivers = false, vendorDir, codeCache = false } = {}) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const main = join(root, 'src', 'cli', 'main.ts');
  const ext = extname(outfile);
  return {
    ...(codeCache
      ? {
          entryPoints: { [basename(outfile, ext)]: join(root, 'src', 'cli', 'cliLoader.ts'), cliMain: main },
          outdir: dirname(outfile),
          ...(ext === '.js' ? {} : { outExtension: { '.js': ext } }),
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
    define: { __CLI_VERSION__: JSON.stringify(version), __CLI_MAIN__: JSON.stringify(`cliMain${ext}`) },
    logLevel: 'warning',
    plugins: vendorDir
      ? [vendorImports(vendorDir, cliVendorGroups(serverDrivers))]
      : // One file: the tokenizer's tables in it packed, as the vendor bundles hold them.
        [tokenizerTablesPacked()],
  };
}
