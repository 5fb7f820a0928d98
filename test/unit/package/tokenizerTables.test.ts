/**
 * The tokenizer's vendor bundles (scripts/vendorBundles.mjs with scripts/tokenizerTables.mjs, issue 43): each rank
 * table is one packed buffer (src/store/context/bpe/rankTable.ts), not the package's array of strings (what `context`
 * loads: the package's form took about 40 MB of heap), holding the package's table rank for rank, and our counter
 * over it counts as the package's encoder.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { packRanks } from '../../../src/store/context/bpe/rankTable';
import { counterOver, type RanksModule } from '../../../src/store/context/tokenCounter';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';

interface Encoding {
  countTokens(text: string, options?: object): number;
}

/** The package's table module as the package's own `require` loads it (a CommonJS file, outside its exports map). */
const loadCommonJs = createRequire(__filename);

const TEXTS = [
  'Hello, world! The weather in Berlin is 12 °C.',
  '東京の天気は晴れです。 Погода в Москве. الطقس في القاهرة',
  '{"city":"Berlin","units":"metric"}\n\tdef f(x):\n        return x ** 2',
  '<|endoftext|> is text here, and so is 🙂🙃 and \u0000',
];

describe('the tokenizer tables in the vendor bundles', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-tokenizer-tables-');
  const bundles: Record<string, Record<string, { packed?: Uint8Array; default?: unknown }>> = {};
  after(() => tmp.cleanup());

  before(async function () {
    const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(ROOT, ...path.split('/'))).href)) as T;
    const { vendorBuildOptions } = await load<{ vendorBuildOptions(out: string, c: object): esbuild.BuildOptions[] }>(
      'scripts/vendorBundles.mjs',
    );
    const { nodeBundleOptions } = await load<{ nodeBundleOptions(o: object): object }>('scripts/extensionBuild.mjs');
    const wanted = vendorBuildOptions(tmp.dir, nodeBundleOptions({ production: true })).filter((b) =>
      /[\\/](o200k|cl100k)\.js$/.test(b.outfile ?? ''),
    );
    assert.equal(wanted.length, 2);
    await Promise.all(wanted.map((b) => esbuild.build({ ...b, absWorkingDir: ROOT })));
    for (const group of ['o200k', 'cl100k']) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      bundles[group] = require(join(tmp.dir, `${group}.js`)) as Record<string, { packed?: Uint8Array }>;
    }
  });

  it("packs them in the one-file CLI too (the store package's bin)", async () => {
    const { cliBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'store-package', 'cliBuild.mjs')).href)) as {
      cliBuildOptions(out: string): esbuild.BuildOptions;
    };
    const out = await esbuild.build({ ...cliBuildOptions(join(tmp.dir, 'one-file-cli.js')), write: false, absWorkingDir: ROOT });
    const text = out.outputFiles!.map((f) => f.text).join('\n');
    // (`packed` of the second table is renamed `packed2` in one bundle scope)
    assert.equal(text.match(/\bpacked\d*\s*=\s*Buffer\.from\(/g)?.length, 2, 'both tables packed');
    // The package's tables are arrays of 100,000s of string literals, one per line; the CLI's own lists are short.
    assert.ok(!/(\n\s*"[^"\n]{1,40}",){1000}/.test(text), 'a table as an array literal of strings is in the bundle');
  });

  for (const [group, encoding] of [
    ['o200k', 'o200k_base'],
    ['cl100k', 'cl100k_base'],
  ] as const) {
    it(`${encoding}: the table is one packed buffer`, () => {
      const text = readFileSync(join(tmp.dir, `${group}.js`), 'utf8');
      assert.ok(/\.packed\s*=\s*Buffer\.from\(["'`][A-Za-z0-9+/=]{100000,}["'`],\s*["'`]base64["'`]\)/.test(text), 'no packed table');
      // The package's table is 100,000s of array items, each a literal on its own: none of them is left.
      assert.ok(!/\n\s*"[^"\n]{1,40}",\n\s*"[^"\n]{1,40}",\n/.test(text), 'an array literal of strings is still in the bundle');
      assert.ok(!/JSON\.parse\(["'`]\[/.test(text), 'the table as a JSON text is still in the bundle');
    });

    it(`${encoding}: the same table as the package's, and the same counts`, async () => {
      const module = bundles[group]![`gpt-tokenizer/bpeRanks/${encoding}`]!;
      assert.ok(module.packed instanceof Uint8Array, 'the bundle exports no packed table');
      assert.equal(module.default, undefined, 'the bundle still exports the array');
      const packageFile = join(ROOT, 'node_modules', 'gpt-tokenizer', 'cjs', 'bpeRanks', `${encoding}.js`);
      const packageTable = (loadCommonJs(packageFile) as { default: (string | number[])[] }).default;
      assert.ok(Buffer.from(module.packed).equals(Buffer.from(packRanks(packageTable))), 'the packed table differs');
      // The bundle's module as the extension and the CLI load it, through the same code.
      const ours = await counterOver(encoding, module as RanksModule);
      const theirs = (await import(`gpt-tokenizer/encoding/${encoding}`)) as Encoding;
      const none = { disallowedSpecial: new Set<string>() };
      for (const sample of TEXTS) assert.equal(ours(sample), theirs.countTokens(sample, none), sample);
    });
  }
});
