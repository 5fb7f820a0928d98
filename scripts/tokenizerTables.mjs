// The tokenizer's rank tables (gpt-tokenizer's `bpeRanks`: 200,000 strings for o200k_base) bundled packed, as
// `src/store/context/bpe/rankTable.ts` reads them (issue 43, the CLI's memory: the package's form is an array of
// strings that its encoder turns into a Map, about 40 MB of heap; packed, the table is one 1.6 MB buffer that our
// counter indexes outside the heap). The bundle holds the buffer as base64 and exports it as `packed`; the module
// from source (tests, tsx) exports the package's array as `default`, which `tokenCounter.ts` packs when it loads.
import { createRequire } from 'node:module';
import { TextEncoder } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The package's table modules: CommonJS where a bundle `require`s the package (the vendor bundles), ES modules where it
 * is reached by `import()` (the one-file CLI); both are read from the CommonJS copy.
 */
const TABLE_FILE = /[\\/]gpt-tokenizer[\\/](cjs|esm)[\\/]bpeRanks[\\/][a-z0-9_]+\.js$/;

/** Our packing and reading of a table (the TypeScript module, bundled for this script on first use). */
let rankTableModule;
async function rankTable() {
  rankTableModule ??= esbuild
    .build({
      entryPoints: [join(root, 'src', 'store', 'context', 'bpe', 'rankTable.ts')],
      bundle: true,
      format: 'esm',
      platform: 'node',
      write: false,
    })
    .then((out) => import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`));
  return rankTableModule;
}

/**
 * An esbuild plugin: each table module exports `packed = Buffer.from("<base64>", "base64")`, checked here when
 * the bundle is built: every rank reads back as the package's token, byte for byte, or the build fails.
 */
export function tokenizerTablesPacked() {
  return {
    name: 'tokenizer-tables-packed',
    setup(build) {
      build.onLoad({ filter: TABLE_FILE }, async (args) => {
        const table = require(args.path.replace(/([\\/])esm([\\/]bpeRanks[\\/])/, '$1cjs$2')).default;
        if (!Array.isArray(table)) throw new Error(`${args.path}: expected an array as its default export`);
        const { packRanks, RankTable } = await rankTable();
        const packed = packRanks(table);
        const read = RankTable.fromPacked(packed);
        const encoder = new TextEncoder();
        if (read.size !== table.length) throw new Error(`${args.path}: ${read.size} ranks packed, ${table.length} in the table`);
        table.forEach((token, rank) => {
          // The token's bytes worked out here again, not by the packing's own code: a check that shares it checks nothing.
          const want = token == null ? new Uint8Array(0) : typeof token === 'string' ? encoder.encode(token) : Uint8Array.from(token);
          const got = read.bytesOf(rank);
          if (!got || Buffer.compare(Buffer.from(got), Buffer.from(want)) !== 0)
            throw new Error(`${args.path}: rank ${rank} does not read back`);
          if (want.length > 0 && read.rankOf(want, 0, want.length) !== rank)
            throw new Error(`${args.path}: rank ${rank} is not found by its bytes`);
        });
        const base64 = Buffer.from(packed).toString('base64');
        // In the module's own format: esbuild takes a file of the package's ESM copy as an ES module.
        const esm = /[\\/]esm[\\/]bpeRanks[\\/]/.test(args.path);
        const value = `Buffer.from(${JSON.stringify(base64)}, "base64")`;
        return { contents: esm ? `export const packed = ${value};\n` : `exports.packed = ${value};\n`, loader: 'js' };
      });
    },
  };
}
