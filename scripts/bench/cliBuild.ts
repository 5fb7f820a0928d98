/**
 * The `agent-sessions` CLI built as `npm run build` builds dist/cli.js, into a folder of a bench's own: the CLI bundle
 * (minified, server drivers in, the heavy packages in vendor bundles beside it) with, by default, the loader that
 * reads it through V8's code cache. The check, CLI memory and first-hit sections run the CLI the way users run it.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Builds the CLI into `dir` from the repository at `root`; resolves with the path of its `cli.js`. */
export async function buildCliAsNpmBuilds(dir: string, root: string, options: { codeCache?: boolean } = {}): Promise<string> {
  const esbuild = await import('esbuild');
  const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(root, ...path.split('/'))).href)) as T;
  const { cliBuildOptions } = await load<{ cliBuildOptions(out: string, o: object): import('esbuild').BuildOptions }>(
    'scripts/store-package/cliBuild.mjs',
  );
  const { vendorBuildOptions } = await load<{ vendorBuildOptions(out: string, c: object): import('esbuild').BuildOptions[] }>(
    'scripts/vendorBundles.mjs',
  );
  const { nodeBundleOptions } = await load<{ nodeBundleOptions(o: object): object }>('scripts/extensionBuild.mjs');
  const cli = join(dir, 'cli.js');
  const builds = [
    cliBuildOptions(cli, { minify: true, serverDrivers: true, vendorDir: './vendor/', codeCache: options.codeCache ?? true }),
    ...vendorBuildOptions(join(dir, 'vendor'), nodeBundleOptions({ production: true })),
  ];
  await Promise.all(builds.map((b) => esbuild.build({ ...b, absWorkingDir: root, logLevel: 'error' })));
  return cli;
}
