/**
 * What the extension loads when VS Code activates it (issue 43, "a light start"), built as esbuild.mjs builds it
 * (scripts/extensionBuild.mjs), minified: `extension.js`, what VS Code loads, is the loader of a few kilobytes
 * (src/extension/extensionLoader.ts) and requires nothing of ours when it is loaded; `extensionMain.js`, which its
 * `activate` loads through V8's code cache, is at most 1 MB, and evaluating it requires none of the heavy packages'
 * bundles in dist/vendor/ (scripts/vendorBundles.mjs): the agents SDK, openai, pg, ioredis, @ag-ui/core, zod and the
 * tokenizers load when a feature first uses them. The loader's `activate` returns before it reads or runs the
 * extension (VS Code times only the call), and its promise resolves to the extension's API.
 *
 * In test/unit/package: it tests the build, not one source folder. `vscode` is a stand-in that answers everything.
 */
import { strict as assert } from 'node:assert';
import { statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { tempDir } from '../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..');
const MAX_ACTIVATION_BYTES = 1_000_000;
/** The loader: what VS Code compiles before `activate` runs. */
const MAX_LOADER_BYTES = 16_000;

/** Anything at all: every property, call and `new` gives another one (the host's API, never called here). */
function anything(): unknown {
  // A function expression as the target: an arrow function cannot be called with `new`, whatever the trap says.
  const handler: ProxyHandler<() => void> = {
    get: (_t, key) => (key === 'then' ? undefined : key === Symbol.toPrimitive ? () => '' : anything()),
    apply: () => anything(),
    construct: () => anything() as object,
  };
  const proto = new Proxy({}, handler as ProxyHandler<object>);
  return new Proxy(function () {}, { ...handler, getPrototypeOf: () => proto });
}

describe('the extension bundle that activation loads', function () {
  this.timeout(120_000);
  const dir = tempDir('asi-activation-');
  after(() => dir.cleanup());

  it('is a loader of a few kilobytes and an extension of at most 1 MB that requires none of the vendor bundles when it is loaded', async () => {
    const { extensionBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'extensionBuild.mjs')).href)) as {
      extensionBuildOptions: (o: { production: boolean; outdir: string }) => esbuild.BuildOptions;
    };
    await esbuild.build({ ...extensionBuildOptions({ production: true, outdir: dir.dir }), logLevel: 'silent' });
    const loaderBytes = statSync(join(dir.dir, 'extension.js')).size;
    assert.ok(loaderBytes <= MAX_LOADER_BYTES, `dist/extension.js is ${loaderBytes} bytes, more than ${MAX_LOADER_BYTES}`);
    const bundle = join(dir.dir, 'extensionMain.js');
    const bytes = statSync(bundle).size;
    assert.ok(bytes <= MAX_ACTIVATION_BYTES, `dist/extensionMain.js is ${bytes} bytes, more than ${MAX_ACTIVATION_BYTES}`);

    const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
    const load = loader._load;
    const required: string[] = [];
    const ours: string[] = [];
    loader._load = function (request: string, ...rest: unknown[]) {
      if (request === 'vscode') return anything();
      if (request.startsWith('./vendor/')) {
        required.push(request);
        return anything();
      }
      if (request.startsWith('.') || request.startsWith('/')) ours.push(request);
      return load.call(this, request, ...rest);
    };
    try {
      // CommonJS's own loading, as the extension host loads the bundle: through Module._load, where the stand-ins are.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const entry = require(join(dir.dir, 'extension.js')) as { activate?: unknown; deactivate?: unknown };
      assert.equal(typeof entry.activate, 'function');
      assert.equal(typeof entry.deactivate, 'function');
      assert.deepEqual(ours.slice(1), [], 'loading the loader loaded more of ours');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const ext = require(bundle) as { activate?: unknown };
      assert.equal(typeof ext.activate, 'function');
    } finally {
      loader._load = load;
    }
    assert.deepEqual(required, [], 'loading the extension required vendor bundles');
  });

  it("returns from the loader's activate before the extension is read or run, and resolves to the extension's API", async () => {
    // The loader as built, beside a stand-in extension that says when it runs and what it was activated with.
    const { extensionBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'extensionBuild.mjs')).href)) as {
      extensionBuildOptions: (o: { production: boolean; outdir: string }) => esbuild.BuildOptions;
    };
    const options = extensionBuildOptions({ production: true, outdir: join(dir.dir, 'loader') });
    await esbuild.build({
      ...options,
      entryPoints: { extension: join(ROOT, 'src', 'extension', 'extensionLoader.ts') },
      logLevel: 'silent',
    });
    const events: string[] = [];
    (globalThis as { activationEvents?: string[] }).activationEvents = events;
    writeFileSync(
      join(dir.dir, 'loader', 'extensionMain.js'),
      `globalThis.activationEvents.push('evaluated');
exports.activate = (context) => { globalThis.activationEvents.push('activated'); return { api: context.name }; };
exports.deactivate = async () => { globalThis.activationEvents.push('deactivated'); };
`,
    );
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const entry = require(join(dir.dir, 'loader', 'extension.js')) as {
        activate(context: object): unknown;
        deactivate(): Promise<void>;
      };
      // A storage nothing can be written in: the cache's write, due after this test, leaves nothing behind.
      const api = entry.activate({ name: 'ctx', globalStorageUri: { fsPath: '/dev/null/storage' } });
      events.push('returned');
      assert.ok(api instanceof Promise, 'activate did not return a promise');
      assert.deepEqual(await api, { api: 'ctx' });
      await entry.deactivate();
      assert.deepEqual(events, ['returned', 'evaluated', 'activated', 'deactivated']);
    } finally {
      delete (globalThis as { activationEvents?: string[] }).activationEvents;
    }
  });
});
