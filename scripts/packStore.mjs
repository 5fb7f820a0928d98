// `npm run pack:store`: the session store (src/store) as an installable npm package.
//   node scripts/packStore.mjs                 → dist/store-package/agent-session-inspector-store-<version>.tgz
//   node scripts/packStore.mjs --out-dir DIR   → the same into DIR (the package test uses a temporary folder)
// Steps: ESM (.mjs) and CommonJS (.cjs) bundles of src/store/index.ts with esbuild; declarations with tsc
// (tsconfig.store.json), kept to what index.d.ts reaches and rewritten to resolve inside the package as .d.ts (CJS)
// and .d.mts (ESM); the `agent-sessions` bin with its vendor bundles; package.json, README and LICENSE; a smoke load
// of both bundles and a run of the bin; then `npm pack`.
// The staging folder is <out-dir>/package; the last line printed is the tarball's path.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { nodeBundleOptions } from './extensionBuild.mjs';
import { cliBuildOptions, cliVendorGroups } from './store-package/cliBuild.mjs';
import { vendorBuildOptions } from './vendorBundles.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outFlag = process.argv.indexOf('--out-dir');
const outDir = resolve(outFlag >= 0 && process.argv[outFlag + 1] ? process.argv[outFlag + 1] : join(root, 'dist', 'store-package'));
const stage = join(outDir, 'package');
const rawTypesRoot = join(outDir, 'types-raw');
// tsc writes src/store's declarations to types-raw/store and the src/shared ones they import to types-raw/shared.
const rawTypes = join(rawTypesRoot, 'store');

const PACKAGE_NAME = '@agent-session-inspector/store';
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Bare module specifiers the published declarations may name (everything else would not resolve for a user). */
const ALLOWED_TYPE_IMPORTS = [/^@openai\/agents$/, /^node:/, /^pg$/, /^ioredis$/];
/** Modules the bundles load at run time instead of containing. */
// pg and ioredis are dependencies of the package (the PostgreSQL and Redis sessions), not bundled copies.
const EXTERNAL = ['better-sqlite3', '@openai/agents', 'pg', 'ioredis'];

function fail(message) {
  console.error(`pack:store: ${message}`);
  process.exit(1);
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', ...options });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout ?? ''}${r.stderr ?? ''}`);
  return r.stdout;
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(join(stage, 'dist', 'types'), { recursive: true });

// 1. Bundles. The driver code loads its SQLite module with require() (so the native addon is loaded only when a
// database is opened, and a missing addon falls back to node:sqlite); an ES module has no require, so the ESM
// bundle defines one from its own URL, which also makes better-sqlite3 resolve from the package's location.
const header = `/*! ${PACKAGE_NAME} ${rootPackage.version} | ${rootPackage.license} */`;
const common = {
  entryPoints: [join(root, 'src', 'store', 'index.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Error classes set `name` from `new.target.name`; minifying or renaming must not change what users see.
  keepNames: true,
  legalComments: 'inline',
  logLevel: 'warning',
};
await Promise.all([
  esbuild.build({
    ...common,
    format: 'esm',
    outfile: join(stage, 'dist', 'index.mjs'),
    banner: {
      js: `${header}\nimport { createRequire as __storeCreateRequire } from 'node:module';\nconst require = __storeCreateRequire(import.meta.url);`,
    },
  }),
  esbuild.build({ ...common, format: 'cjs', outfile: join(stage, 'dist', 'index.cjs'), banner: { js: header } }),
  // The `agent-sessions` command line (the package's bin), built as the VSIX's dist/cli.js is (issue 43: one file
  // of 8.4 MB held 30 MB more than `node -e 0` before a command began, and `show` or an export peaked at 107–116 MB
  // on file A): dist/cli.cjs a loader, dist/cliMain.cjs the CLI through V8's code cache, and the heavy packages it
  // uses (zod, openai, the MCP SDK, @ag-ui/core, the tokenizers' tables) in dist/vendor/, loaded on first use. pg
  // and ioredis stay dependencies.
  esbuild.build(cliBuildOptions(join(stage, 'dist', 'cli.cjs'), { minify: true, vendorDir: './vendor/', codeCache: true })),
  ...vendorBuildOptions(
    join(stage, 'dist', 'vendor'),
    { ...nodeBundleOptions({ production: true }), external: [...nodeBundleOptions().external, ...EXTERNAL] },
    cliVendorGroups(),
  ).map((options) => esbuild.build(options)),
]);

// 2. Declarations: tsc writes one .d.ts per source file; keep those index.d.ts reaches, with relative specifiers
// given explicit extensions (Node16/NodeNext resolution needs them in ESM declarations).
run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.store.json', '--outDir', rawTypesRoot]);

const SPECIFIER = /(\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+|\/\/\/\s*<reference\s+(?:path|types)=)(['"])([^'"]+)\2/gm;
const queue = ['index'];
const seen = new Set();
while (queue.length > 0) {
  const id = queue.shift(); // path below rawTypes without `.d.ts`, with forward slashes
  if (seen.has(id)) continue;
  seen.add(id);
  const file = join(rawTypes, `${id}.d.ts`);
  if (!existsSync(file)) fail(`declaration ${relative(root, file)} is missing`);
  const text = readFileSync(file, 'utf8').replace(/\r\n/g, '\n');
  // .d.ts files are CommonJS declarations (the package has no "type"), .d.mts files ESM ones.
  for (const [ext, jsExt] of [
    ['.d.ts', '.js'],
    ['.d.mts', '.mjs'],
  ]) {
    let out = text.replace(SPECIFIER, (whole, lead, quote, spec) => {
      if (lead.startsWith('///'))
        fail(`${id}.d.ts has a triple-slash reference (${spec}); declarations must not point outside the package`);
      if (!spec.startsWith('.')) {
        if (!ALLOWED_TYPE_IMPORTS.some((re) => re.test(spec)))
          fail(`${id}.d.ts imports types from '${spec}', which the package does not provide`);
        return whole;
      }
      const target = posix.normalize(posix.join(posix.dirname(id), spec));
      // src/shared's declarations land in dist/shared, next to dist/types, with the same relative paths as in src.
      if (target.startsWith('..') && !target.startsWith('../shared/'))
        fail(`${id}.d.ts imports '${spec}', outside src/store and src/shared`);
      const asIndex = posix.join(target, 'index');
      const resolved = existsSync(join(rawTypes, `${target}.d.ts`))
        ? target
        : existsSync(join(rawTypes, `${asIndex}.d.ts`))
          ? asIndex
          : undefined;
      if (!resolved) fail(`${id}.d.ts imports '${spec}', which has no declaration`);
      queue.push(resolved);
      let rel = posix.relative(posix.dirname(id), resolved);
      if (!rel.startsWith('.')) rel = `./${rel}`;
      return `${lead}${quote}${rel}${jsExt}${quote}`;
    });
    // The entry's comment describes this repository's layout; say what the file is in the package instead.
    if (id === 'index')
      out = out.replace(
        /^\/\*\*[\s\S]*?\*\/\n/,
        `/** ${PACKAGE_NAME}: SQLite sessions for @openai/agents, file-compatible with the Python SDK. */\n`,
      );
    const dest = join(stage, 'dist', 'types', `${id}${ext}`);
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, out);
  }
}
rmSync(rawTypesRoot, { recursive: true, force: true });

// 3. package.json, README, LICENSE.
const betterSqlite3 = rootPackage.dependencies?.['better-sqlite3'];
const agents = rootPackage.dependencies?.['@openai/agents'];
if (!betterSqlite3 || !agents) fail('the root package.json must list better-sqlite3 and @openai/agents');
const serverDeps = {
  pg: rootPackage.dependencies?.pg,
  ioredis: rootPackage.dependencies?.ioredis,
  // The declarations of PostgresSession name pg's Pool type.
  '@types/pg': rootPackage.devDependencies?.['@types/pg'],
};
for (const [name, version] of Object.entries(serverDeps)) if (!version) fail(`the root package.json must list ${name}`);
const manifest = {
  name: PACKAGE_NAME,
  version: rootPackage.version,
  description:
    'Sessions for the OpenAI Agents SDK for JavaScript (@openai/agents): AdvancedSQLiteSession with branches and per-turn usage, PostgresSession and RedisSession, all compatible with the Python SDK, plus a read-only inspector API.',
  license: rootPackage.license,
  keywords: [
    'openai',
    'openai-agents',
    'agents',
    'agents-sdk',
    'session',
    'memory',
    'sqlite',
    'postgresql',
    'redis',
    'better-sqlite3',
    'node-sqlite',
    'conversation',
    'branching',
  ],
  repository: { ...rootPackage.repository, directory: 'src/store' },
  ...(rootPackage.homepage ? { homepage: rootPackage.homepage } : {}),
  ...(rootPackage.bugs ? { bugs: rootPackage.bugs } : {}),
  engines: { node: '>=20' },
  sideEffects: false,
  exports: {
    '.': {
      import: { types: './dist/types/index.d.mts', default: './dist/index.mjs' },
      require: { types: './dist/types/index.d.ts', default: './dist/index.cjs' },
    },
    './package.json': './package.json',
  },
  bin: { 'agent-sessions': './dist/cli.cjs' },
  main: './dist/index.cjs',
  module: './dist/index.mjs',
  types: './dist/types/index.d.ts',
  files: ['dist', 'README.md', 'LICENSE'],
  // Optional: when the native addon cannot be built or loaded, the store uses Node's built-in node:sqlite.
  optionalDependencies: { 'better-sqlite3': betterSqlite3 },
  dependencies: serverDeps,
  // Only the declarations name @openai/agents (the Session and AgentInputItem types); the code never loads it.
  peerDependencies: { '@openai/agents': `>=${agents.replace(/^[~^]/, '')} <1` },
  peerDependenciesMeta: { '@openai/agents': { optional: true } },
  publishConfig: { access: 'public' },
};
writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
copyFileSync(join(root, 'scripts', 'store-package', 'README.md'), join(stage, 'README.md'));
copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));

// 4. Both bundles load and export the same names (no network, no SQLite file: only the module graph).
const requireFromStage = createRequire(join(stage, 'package.json'));
const cjsKeys = Object.keys(requireFromStage(join(stage, 'dist', 'index.cjs'))).sort();
const esmKeys = Object.keys(await import(pathToFileURL(join(stage, 'dist', 'index.mjs')).href)).sort();
if (JSON.stringify(cjsKeys) !== JSON.stringify(esmKeys)) fail(`the ESM and CJS bundles export different names:\n${esmKeys}\n${cjsKeys}`);
for (const name of ['AdvancedSQLiteSession', 'SQLiteSession', 'openSessionDatabase', 'SessionDatabaseError']) {
  if (!cjsKeys.includes(name)) fail(`the bundle does not export ${name}`);
}
// The bin runs, and every vendor bundle the CLI or another vendor bundle requires is in the package (a group missing
// from cliVendorGroups would only fail when a command first needs it).
const vendorDir = join(stage, 'dist', 'vendor');
const requiredBy = (file, prefix) =>
  [...readFileSync(file, 'utf8').matchAll(new RegExp(`require\\("${prefix.replace(/[./]/g, '\\$&')}([\\w-]+\\.js)"\\)`, 'g'))].map(
    (m) => m[1],
  );
const vendorRequired = requiredBy(join(stage, 'dist', 'cliMain.cjs'), './vendor/');
if (vendorRequired.length === 0) fail('dist/cliMain.cjs requires no vendor bundle: the build changed shape');
for (const file of new Set([...vendorRequired, ...readdirSync(vendorDir).flatMap((f) => requiredBy(join(vendorDir, f), './'))]))
  if (!existsSync(join(vendorDir, file))) fail(`a bundle requires vendor/${file}, which was not built`);
const cliVersion = run(process.execPath, [join(stage, 'dist', 'cli.cjs'), '--version'], {
  env: { ...process.env, AGENT_SESSIONS_CODE_CACHE: 'off' },
}).trim();
if (cliVersion !== rootPackage.version) fail(`agent-sessions --version printed ${cliVersion}, not ${rootPackage.version}`);

// 5. The tarball.
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const packed = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', outDir], { cwd: stage }))[0];
const tarball = join(outDir, packed.filename);
console.log(`${packed.name}@${packed.version}: ${packed.entryCount} files, ${packed.unpackedSize} bytes unpacked`);
for (const f of packed.files) console.log(`  ${String(f.size).padStart(8)}  ${f.path}`);
console.log(`${statSync(tarball).size} bytes packed`);
console.log(tarball);
