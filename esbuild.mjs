// Bundles the project with esbuild. Type checking is `tsc --noEmit` (esbuild does not type-check).
//   node esbuild.mjs               development build
//   node esbuild.mjs --production  minified, no source maps
//   node esbuild.mjs --watch       rebuild on change
import * as esbuild from 'esbuild';
import { cliBuildOptions } from './scripts/store-package/cliBuild.mjs';
import { extensionBuildOptions, nodeBundleOptions, searchWorkerBuildOptions, storeWorkerBuildOptions } from './scripts/extensionBuild.mjs';
import { vendorBuildOptions } from './scripts/vendorBundles.mjs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** Node-side bundles: CommonJS for the extension host and for `require()` by library users. */
const nodeCommon = nodeBundleOptions({ production });

const contexts = [
  // The extension host's loader and bundle (extension.js loads extensionMain.js through V8's code cache); the heavy
  // packages it uses are required from dist/vendor/ on first use.
  extensionBuildOptions({ production, outdir: 'dist' }),
  // Those packages' bundles, dist/vendor/<group>.js: one copy of each, shared by the extension and dist/cli.js.
  ...vendorBuildOptions('dist/vendor', nodeCommon),
  // The integration suite, loaded by the extension host as extensionTestsPath (mocha stays in node_modules).
  {
    ...nodeCommon,
    entryPoints: { 'test/integration': 'test/integration/index.ts' },
    outdir: 'dist',
    external: [...nodeCommon.external, 'mocha'],
  },
  // The session store as a library: dist/store.js exports exactly src/store/index.ts.
  { ...nodeCommon, entryPoints: { store: 'src/store/index.ts' }, outdir: 'dist' },
  // The search worker (a worker_threads entry the extension and the benchmark start), next to dist/extension.js: a
  // loader that runs it through V8's code cache (searchWorkerLoader.ts).
  ...searchWorkerBuildOptions({ production, outdir: 'dist' }),
  // The store worker: every SQLite connection the extension opens lives in it (src/store/worker/). Its entry is a
  // loader that runs the worker itself through V8's code cache (storeWorkerLoader.ts).
  ...storeWorkerBuildOptions({ production, outdir: 'dist' }),
  // The conversation view: one browser bundle and its stylesheet (the webview sees only src/shared).
  {
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: !production,
    minify: production,
    logLevel: 'warning',
    entryPoints: {
      'webview/main': 'webview/conversation/main.ts',
      'webview/style': 'webview/styles/main.css',
      // The compare view: its own page and stylesheet (on top of style.css).
      'webview/compare': 'webview/compare/main.ts',
      'webview/compare-style': 'webview/styles/compare.css',
    },
    outdir: 'dist',
  },
  // Command-line tools: the demo (`npm start`) and the benchmark (`npm run bench`).
  // scripts/host/hostTools.mjs (which the demo uses to install code-server) finds the project from import.meta.url
  // when run as ESM; in these CommonJS bundles it has none and falls back to the working folder (npm runs at the root).
  {
    ...nodeCommon,
    entryPoints: { demo: 'scripts/demo.ts', bench: 'scripts/bench.ts' },
    outdir: 'dist',
    // scripts/bench/mcp.ts builds the CLI with esbuild only when run on its own; never inside the bundle.
    external: [...nodeCommon.external, 'esbuild'],
    define: { ...nodeCommon.define, 'import.meta.url': 'undefined' },
  },
  // The store package's command line, `agent-sessions` (node dist/cli.js …).
  // pg and ioredis bundled: the VSIX ships it as the MCP server VS Code starts (src/extension/codingAgents).
  // Its heavy packages come from dist/vendor/ on first use, as the extension's do (`agent-sessions --version` compiles
  // neither the MCP SDK nor zod). dist/cli.js is a loader; the CLI is dist/cliMain.js, loaded through V8's code cache.
  cliBuildOptions('dist/cli.js', {
    minify: production,
    sourcemap: !production,
    serverDrivers: true,
    vendorDir: './vendor/',
    codeCache: true,
  }),
];

if (watch) {
  // One "[watch] build started" … "[watch] build finished" pair around each round of rebuilds (all bundles, the
  // first time; the ones a change touches, later), with every error and warning in between on one line as
  // `esbuild: error: file:line:column: text`: what the background problem matcher in .vscode/tasks.json reads, so F5
  // waits for the first build and the Problems view shows the errors. esbuild's own log is off meanwhile.
  let active = 0;
  let settle;
  let messages = [];
  const line = (kind) => (m) =>
    m.location
      ? `esbuild: ${kind}: ${m.location.file}:${m.location.line}:${m.location.column + 1}: ${m.text}`
      : `esbuild: ${kind}: ${m.text}`;
  const report = {
    name: 'watch-report',
    setup(build) {
      build.onStart(() => {
        clearTimeout(settle);
        if (active++ === 0 && settle === undefined) {
          messages = [];
          console.log('[watch] build started');
        }
        settle = undefined;
      });
      build.onEnd((result) => {
        messages.push(...result.errors.map(line('error')), ...result.warnings.map(line('warning')));
        if (--active > 0) return;
        // Bundles rebuilt for the same change may start a moment apart: wait before calling the round finished.
        settle = setTimeout(() => {
          settle = undefined;
          // A file several bundles include reports its error once per bundle: print each line once.
          messages = [...new Set(messages)];
          for (const m of messages) console.log(m);
          const errors = messages.filter((m) => m.startsWith('esbuild: error')).length;
          console.log(`[watch] build finished${errors > 0 ? ` with ${errors} error(s)` : ''}`);
        }, 300);
      });
    },
  };
  const ctxs = await Promise.all(
    contexts.map((options) => esbuild.context({ ...options, logLevel: 'silent', plugins: [...(options.plugins ?? []), report] })),
  );
  await Promise.all(ctxs.map((ctx) => ctx.watch()));
  console.log('esbuild: watching for changes');
} else {
  await Promise.all(contexts.map((options) => esbuild.build(options)));
}
