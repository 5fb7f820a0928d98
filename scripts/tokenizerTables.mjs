// The tokenizer's merge tables (gpt-tokenizer's `bpeRanks`, 200,000 strings for o200k_base) bundled as one JSON text
// instead of the package's array literals (issue 43, the CLI's memory: V8 parses a JS array literal of 200,000 items
// into a syntax tree first, which took about 25 MB of memory beyond the table itself while `context` loaded it; a
// JSON text is read straight into the array, as V8's own advice for large data literals says).
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';

const require = createRequire(import.meta.url);

/** The package's table modules (CommonJS: the vendor bundles `require` the package). */
const TABLE_FILE = /[\\/]gpt-tokenizer[\\/]cjs[\\/]bpeRanks[\\/][a-z0-9_]+\.js$/;

/**
 * An esbuild plugin: each table module becomes `exports.default = JSON.parse("…")` holding the same array (checked
 * here, item for item, when the bundle is built: a table that would not read back the same fails the build).
 */
export function tokenizerTablesAsJson() {
  return {
    name: 'tokenizer-tables-as-json',
    setup(build) {
      build.onLoad({ filter: TABLE_FILE }, (args) => {
        const table = require(args.path).default;
        if (!Array.isArray(table)) throw new Error(`${args.path}: expected an array as its default export`);
        const text = JSON.stringify(table);
        if (!isDeepStrictEqual(JSON.parse(text), table)) throw new Error(`${args.path}: the table does not survive JSON`);
        return { contents: `exports.default = JSON.parse(${JSON.stringify(text)});\n`, loader: 'js' };
      });
    },
  };
}
