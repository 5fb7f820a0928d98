// The esbuild options of the extension host's bundle, the workers' and every Node-side bundle, shared by esbuild.mjs,
// the tests of what they load (test/unit/package/activationBundle.test.ts, test/unit/store/worker/workerLoaders.test.ts)
// and the bench, which starts the workers as the extension does (scripts/bench/benchModules.ts).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VENDOR_GROUPS, vendorImports } from './vendorBundles.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Node-side bundles: CommonJS for the extension host and for `require()` by library users. */
export function nodeBundleOptions({ production = false } = {}) {
  return {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: !production,
    minify: production,
    // Error classification reads class names (the openai client's APIError, APIConnectionError, …); minifying must
    // not rename them.
    keepNames: true,
    // better-sqlite3 is a native addon and must be loaded from node_modules; vscode is provided by the host.
    external: ['vscode', 'better-sqlite3'],
    // Node 21+ has a global `navigator`, and VS Code's extension host reports every read of it as a PendingMigrationError
    // (code that takes `navigator` for "a browser"). Bundled libraries probe it only to detect browsers (zod's
    // `allowsEval` looks for Cloudflare on every start, the openai client its platform); these bundles run on Node, so
    // the probe is answered at build time and the global is never read.
    define: { navigator: 'undefined' },
    logLevel: 'warning',
  };
}

/**
 * The extension host's bundles: `<outdir>/extension.js`, the few kilobytes VS Code loads (src/extension/extensionLoader.ts),
 * which loads `<outdir>/extensionMain.js`, the extension, through V8's code cache (src/store/files/codeCache.ts). The
 * heavy packages (the agents SDK, openai, pg, ioredis, @ag-ui/core, zod, the tokenizers' tables) are required from
 * `<outdir>/vendor/` when a module that uses them first runs (scripts/vendorBundles.mjs): activation compiles and
 * runs only what it uses.
 */
export function extensionBuildOptions({ production = false, outdir }) {
  return {
    ...nodeBundleOptions({ production }),
    entryPoints: {
      extension: join(root, 'src', 'extension', 'extensionLoader.ts'),
      extensionMain: join(root, 'src', 'extension', 'extension.ts'),
    },
    outdir,
    plugins: [vendorImports('./vendor/', Object.keys(VENDOR_GROUPS))],
  };
}

/**
 * The store worker's bundles: `<outdir>/storeWorker.js`, a loader (src/store/worker/storeWorkerLoader.ts) that runs
 * `<outdir>/storeWorkerMain.js`, the worker, through V8's code cache when its client names a cache folder. The heavy
 * packages are required from `<outdir>/vendor/`, as the extension's.
 */
export function storeWorkerBuildOptions({ production = false, outdir }) {
  return workerBuildOptions({
    production,
    outdir,
    name: 'storeWorker',
    main: 'src/store/worker/storeWorker.ts',
    loader: 'src/store/worker/storeWorkerLoader.ts',
  });
}

/** The search worker's bundles, as the store worker's: `<outdir>/searchWorker.js` (searchWorkerLoader.ts) and `searchWorkerMain.js`. */
export function searchWorkerBuildOptions({ production = false, outdir }) {
  return workerBuildOptions({
    production,
    outdir,
    name: 'searchWorker',
    main: 'src/store/search/searchWorker.ts',
    loader: 'src/store/search/searchWorkerLoader.ts',
  });
}

function workerBuildOptions({ production, outdir, name, main, loader }) {
  const common = nodeBundleOptions({ production });
  return [
    {
      ...common,
      entryPoints: { [`${name}Main`]: join(root, main) },
      outdir,
      plugins: [vendorImports('./vendor/', Object.keys(VENDOR_GROUPS))],
    },
    { ...common, entryPoints: { [name]: join(root, loader) }, outdir },
  ];
}
