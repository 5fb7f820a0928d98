// The heavy third-party packages in bundles of their own, `dist/vendor/<group>.js`, loaded by `require()` the first
// time a module that imports them runs (issue 43: "a light start"). esbuild keeps a dynamic `import()` lazy only with
// code splitting, which CommonJS output does not have: without this, the extension's one bundle held the agents SDK,
// `openai`, `pg` and `ioredis` (3.4 MB, ~49 ms compiled before `activate` ran), and the CLI compiled the MCP SDK and
// zod before printing its version.
//
// Only packages move out, never our own modules: each of ours stays in one bundle, so its state (run locks, the
// branches runs write) and its classes (`instanceof BranchError`) are one. A package imported from several places
// (zod, by the agents SDK, @ag-ui/core, the MCP SDK and our request checks; openai, by the SDK and by us) is one group
// every other bundle requires, so there is one copy of it, as there was.
//
// A module of ours that imports a grouped package becomes, in its bundle, `require('./vendor/<group>.js')[spec]`: the
// bundle's lazy module wrappers (what a dynamic `import()` or a `require()` inside a function reaches) run it on first
// use, a static import at the top of what activation loads runs it at activation.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenizerTablesPacked } from './tokenizerTables.mjs';

/** Each group's bundle exports these specifiers' modules, by specifier. */
export const VENDOR_GROUPS = {
  // One copy for everyone: zod's entry points share their internals.
  zod: ['zod', 'zod/v4', 'zod/v3', 'zod/v4/core', 'zod/v4-mini', 'zod/mini'],
  // The agents SDK (MCP client, realtime and all); the `openai` client it uses is the group below, ours too
  // (agentConfig.ts, the check command's model grader), so there is one copy of its error classes.
  agents: ['@openai/agents'],
  openai: ['openai'],
  // Agent commands' event and input schemas.
  agUi: ['@ag-ui/core/schemas', '@ag-ui/core'],
  // `agent-sessions mcp`.
  mcp: ['@modelcontextprotocol/sdk/server/mcp.js', '@modelcontextprotocol/sdk/server/stdio.js'],
  // The server stores' drivers (src/store/remote/serverDrivers.ts).
  pg: ['pg'],
  ioredis: ['ioredis'],
  // Token counts (src/store/context/tokenCounter.ts): each encoding's rank table (packed: scripts/tokenizerTables.mjs)
  // is megabytes, loaded when it is used.
  o200k: ['gpt-tokenizer/bpeRanks/o200k_base'],
  cl100k: ['gpt-tokenizer/bpeRanks/cl100k_base'],
};

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * An esbuild plugin: imports of the `groups`' specifiers become `require(relDir + group + '.js')[specifier]`, the
 * path relative to the output file (`./vendor/` from `dist/`, `./` from a vendor bundle).
 */
export function vendorImports(relDir, groups) {
  const groupOf = new Map(groups.flatMap((g) => VENDOR_GROUPS[g].map((spec) => [spec, g])));
  const filter = new RegExp(`^(${[...groupOf.keys()].map(escape).join('|')})$`);
  return {
    name: 'vendor-imports',
    setup(build) {
      build.onResolve({ filter }, (args) => (args.namespace === 'vendor' ? undefined : { path: args.path, namespace: 'vendor' }));
      build.onResolve({ filter: /^\.\.?\//, namespace: 'vendor' }, (args) => ({ path: args.path, external: true }));
      build.onLoad({ filter: /.*/, namespace: 'vendor' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(`${relDir}${groupOf.get(args.path)}.js`)})[${JSON.stringify(args.path)}];`,
        loader: 'js',
      }));
    },
  };
}

/**
 * The esbuild options of the `groups`' bundles (every group by default) in `outdir` (`dist/vendor`), on top of
 * `common` (platform, format, minify, define, external…). Each maps the other groups' packages to their bundles, so a
 * package is in one of them only. A left-out group's packages (the store package builds no `agents`, `pg` or `ioredis`:
 * they are its dependencies) would be copied into each bundle importing them unless `common.external` names them.
 */
export function vendorBuildOptions(outdir, common, groups = Object.keys(VENDOR_GROUPS)) {
  return groups.map((group) => ({
    ...common,
    stdin: {
      // Getters: a group's entry points are run when asked for (zod's v3 and mini are not zod's classic API's cost).
      contents: `module.exports = {${VENDOR_GROUPS[group]
        .filter((spec) => canResolve(spec))
        .map((spec) => `get ${JSON.stringify(spec)}() { return require(${JSON.stringify(spec)}); }`)
        .join(', ')}};`,
      resolveDir: root,
      sourcefile: `vendor-${group}.js`,
      loader: 'js',
    },
    outfile: `${outdir}/${group}.js`,
    plugins: [
      ...(common.plugins ?? []),
      ...(group === 'o200k' || group === 'cl100k' ? [tokenizerTablesPacked()] : []),
      vendorImports(
        './',
        groups.filter((g) => g !== group),
      ),
    ],
  }));
}

/** Whether a specifier is installed (an optional entry such as `zod/mini` may not be in every version). */
function canResolve(spec) {
  try {
    import.meta.resolve(spec);
    return true;
  } catch {
    return false;
  }
}
