/**
 * The tokenizer's vendor bundles (scripts/vendorBundles.mjs with scripts/tokenizerTables.mjs, issue 43): the merge
 * tables are one JSON text, not the package's array literals (what `context` loads: parsing the literals took about
 * 25 MB more), holding the package's table item for item, and the encoder built from it encodes as the package's.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';

interface Encoding {
  encode(text: string, options?: object): number[];
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
  const bundles: Record<string, Record<string, Encoding>> = {};
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
      bundles[group] = require(join(tmp.dir, `${group}.js`)) as Record<string, Encoding>;
    }
  });

  for (const [group, encoding] of [
    ['o200k', 'o200k_base'],
    ['cl100k', 'cl100k_base'],
  ] as const) {
    it(`${encoding}: the table is read from one JSON text`, () => {
      const text = readFileSync(join(tmp.dir, `${group}.js`), 'utf8');
      // (minified, the JSON text is a template literal)
      assert.ok(/JSON\.parse\(["'`]\[/.test(text), 'no JSON.parse of the table in the bundle');
      // The package's table is 100,000s of array items, each a literal on its own: none of them is left.
      assert.ok(!/\n\s*"[^"\n]{1,40}",\n\s*"[^"\n]{1,40}",\n/.test(text), 'an array literal of strings is still in the bundle');
    });

    it(`${encoding}: the same table as the package's, and the same tokens`, async () => {
      const text = readFileSync(join(tmp.dir, `${group}.js`), 'utf8');
      const literal = /JSON\.parse\((`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*")\)/s.exec(text)?.[1];
      assert.ok(literal !== undefined, 'no JSON.parse of a literal in the bundle');
      // The literal esbuild wrote, read back as JS reads it.
      const table = JSON.parse(new Function(`return ${literal}`)() as string) as unknown;
      const packageFile = join(ROOT, 'node_modules', 'gpt-tokenizer', 'cjs', 'bpeRanks', `${encoding}.js`);
      const packageTable = (loadCommonJs(packageFile) as { default: unknown }).default;
      assert.deepEqual(table, packageTable);
      const ours = bundles[group]![`gpt-tokenizer/encoding/${encoding}`]!;
      const theirs = (await import(`gpt-tokenizer/encoding/${encoding}`)) as Encoding;
      const none = { disallowedSpecial: new Set<string>() };
      for (const sample of TEXTS) {
        assert.deepEqual(ours.encode(sample, none), theirs.encode(sample, none), sample);
        assert.equal(ours.countTokens(sample, none), theirs.countTokens(sample, none), sample);
      }
    });
  }
});
