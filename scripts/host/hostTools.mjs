// Installs, on first use, what the test phases and `npm start` need beyond `npm install`: exact Node versions (the
// npm `node` package ships the real binary and its headers), code-server builds that match VS Code desktop releases,
// and Debian packages (Chromium, native build tools). Everything lands in a per-user cache outside the clone (CACHE
// below: $ASI_CACHE_DIR, else $XDG_CACHE_HOME/agent-session-inspector, else ~/.cache/agent-session-inspector), so
// every clone and worktree on a machine shares one install, and a second call is a fast no-op. Installs take a lock
// per item (CACHE/locks/), so scripts/test.mjs can install in the background while phases that need the same item
// wait for it instead of installing it twice. Plain .mjs so scripts/test.mjs and the TypeScript harness can both
// import it without a build.
//
// Why these versions: VS Code desktop runs extensions on Electron's Node, whose ABI no better-sqlite3 built here
// matches, so desktop users always run on node:sqlite. The hosts below are the oldest and newest code-server
// releases on npm whose Node has node:sqlite, run on the exact Node the matching desktop release ships.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// import.meta.url is absent when esbuild bundles this file into a CommonJS tool (the demo): that runs from the root.
const here = import.meta.url ? dirname(fileURLToPath(import.meta.url)) : undefined;
export const ROOT = process.env.ASI_ROOT ?? (here ? join(here, '..', '..') : process.cwd());
/** Where installed tools (and the benchmark's generated files) live: outside the clone, shared by all clones. */
// (XDG: a relative XDG_CACHE_HOME is invalid and ignored.)
const xdgCache =
  process.env.XDG_CACHE_HOME && isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache');
export const CACHE = process.env.ASI_CACHE_DIR || join(xdgCache, 'agent-session-inspector');

/** Node versions the store suites run on: the extension-host Node of VS Code 1.101–1.102, 1.103, 1.107–1.122, 1.123+. */
export const STORE_NODE_VERSIONS = ['22.15.1', '22.17.0', '22.22.1', '24.15.0'];

/**
 * Real extension hosts the integration and UI suites run in. `vscode` is the VS Code release code-server embeds;
 * `node` the Node that desktop release runs extensions on (code-server runs on whatever `node` is first on PATH).
 */
export const HOSTS = [
  // 4.103.2's @vscode/ripgrep downloads rg from GitHub in its postinstall unless its cache holds the archive.
  { id: 'vscode-1.103', codeServer: '4.103.2', vscode: '1.103.2', node: '22.17.0', ripgrep: { pkg: '1.15.14', tag: 'v13.0.0-13' } },
  // Newer workbenches honour the URL payload's extensionDevelopmentPath/extensionTestsPath only with VS Code's
  // smoke-test driver enabled; 4.139 passes that flag through with --vscode-option.
  {
    id: 'vscode-1.139',
    codeServer: '4.139.1',
    vscode: '1.139.1',
    node: '24.15.0',
    serverArgs: ['--vscode-option', 'enable-smoke-test-driver'],
  },
];

export function hostById(id) {
  const host = HOSTS.find((h) => h.id === id);
  if (!host) throw new Error(`Unknown host '${id}'; known: ${HOSTS.map((h) => h.id).join(', ')}`);
  return host;
}

/** Thrown when something a phase needs cannot be installed; the message says what and how to fix it. */
export class InstallError extends Error {}

/**
 * The environment for a nested npm: without the npm_* variables `npm test` sets. A nested npm reads them as its own
 * configuration, and code-server's postinstall reads the Node version from npm_config_user_agent, which would name
 * the outer npm's Node 20 instead of the host's.
 */
function cleanEnv(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_/i.test(k)));
}

function run(cmd, args, options = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', ...options });
}

function versionOf(bin) {
  const r = run(bin, ['--version']);
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const LOCK_TIMEOUT_MS = 30 * 60_000;

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Runs `fn` holding the lock `name` (a directory under CACHE/locks/ holding the owner's pid): another process that
 * installs the same item meanwhile (npm test's background installs, a phase, a second clone's run) waits for it,
 * and `fn` then finds the item installed. A lock whose owner is gone (a killed run) is taken over.
 */
export function withLock(name, fn, log = console.log) {
  const dir = join(CACHE, 'locks', `${name}.lock`);
  mkdirSync(dirname(dir), { recursive: true });
  const until = Date.now() + LOCK_TIMEOUT_MS;
  let said = false;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let owner;
    try {
      owner = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    } catch {
      // just created: its owner writes the pid next
    }
    // Owner gone (a killed run), or no owner written long after the lock was made (killed in between).
    let age = 0;
    try {
      age = Date.now() - statSync(dir).mtimeMs;
    } catch {
      continue;
    }
    if (owner ? !isAlive(owner) : age > 10_000) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > until) throw new InstallError(`Gave up waiting for ${dir} (held by process ${owner}).`);
    if (!said) log(`Waiting for another process (${owner ?? '?'}) that installs ${name} …`);
    said = true;
    Atomics.wait(sleeper, 0, 0, 250);
  }
  try {
    return fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where `ensureNode(version)` keeps that Node: its binary and the folder with `include/node` (for node-gyp). */
export function nodePaths(version) {
  const prefix = join(CACHE, 'node', version);
  const pkg = join(prefix, 'node_modules', 'node');
  // The `node` package installs the platform package (binary + headers) under its own node_modules.
  const platformDir = join(pkg, 'node_modules', `node-${process.platform}-${process.arch}`);
  return { prefix, bin: join(platformDir, 'bin', 'node'), binDir: join(platformDir, 'bin'), headersDir: platformDir };
}

/** Installs Node `version` from the npm registry into CACHE/node/<version> unless it is there; returns its paths. */
export function ensureNode(version, log = console.log) {
  const paths = nodePaths(version);
  const present = () => existsSync(paths.bin) && versionOf(paths.bin) === `v${version}`;
  if (present()) return paths;
  return withLock(`node-${version}`, () => (present() ? paths : installNode(version, paths, log)), log);
}

function installNode(version, paths, log) {
  log(`Installing Node ${version} from the npm registry into ${paths.prefix} (once) …`);
  rmSync(paths.prefix, { recursive: true, force: true });
  mkdirSync(paths.prefix, { recursive: true });
  writeFileSync(join(paths.prefix, 'package.json'), '{"name":"asi-node","private":true}\n');
  const r = run(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', paths.prefix, `node@${version}`],
    {
      cwd: paths.prefix,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (r.status !== 0 || versionOf(paths.bin) !== `v${version}`) {
    throw new InstallError(
      `Could not install Node ${version} from the npm registry (npm exit ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join(' | ')}. ` +
        `The phase needs the npm registry once; afterwards it runs from ${CACHE}.`,
    );
  }
  return paths;
}

/** Debian packages missing on this machine (of `names`). */
function missingDebianPackages(names) {
  return names.filter((p) => run('dpkg', ['-s', p]).status !== 0);
}

/** Installs Debian packages that are missing (needs root and Debian's repositories). */
export function ensureDebianPackages(names, log = console.log) {
  if (missingDebianPackages(names).length === 0) return;
  // One apt-get at a time (dpkg's own lock would make a second one fail rather than wait).
  withLock('apt', () => installDebianPackages(missingDebianPackages(names), log), log);
}

function installDebianPackages(need, log) {
  if (need.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new InstallError(
      `These Debian packages are missing: ${need.join(' ')}. Install them (sudo apt-get install -y ${need.join(' ')}) and run again.`,
    );
  }
  log(`Installing Debian packages: ${need.join(' ')} …`);
  const update = run('apt-get', ['update', '-qq'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const r = run('apt-get', ['install', '-y', '-qq', '-o', 'DPkg::Lock::Timeout=600', ...need], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const still = missingDebianPackages(need);
  if (r.status !== 0 || still.length > 0) {
    throw new InstallError(
      `apt-get could not install ${still.join(' ') || need.join(' ')}: ${(r.stderr || update.stderr || '').trim().split('\n').slice(-3).join(' | ')}`,
    );
  }
}

/**
 * Chromium for the UI suites (Debian's, driven by playwright-core: never a downloaded browser), with fonts for Latin
 * and for Korean (and the other CJK scripts): without a CJK font the Korean screenshots would show empty boxes.
 */
export const BROWSER_PACKAGES = ['chromium', 'fonts-dejavu-core', 'fonts-noto-cjk'];

export function ensureBrowser(log = console.log) {
  ensureDebianPackages(BROWSER_PACKAGES, log);
  return '/usr/bin/chromium';
}

/** What code-server's native modules need to build (node-gyp against the host Node's own headers). */
export const CODE_SERVER_BUILD_PACKAGES = [
  'build-essential',
  'python3',
  'pkg-config',
  'libkrb5-dev',
  'libx11-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
];

export function codeServerPaths(host) {
  const dir = join(CACHE, 'code-server', host.codeServer);
  return {
    dir,
    bin: join(dir, 'node_modules', '.bin', 'code-server'),
    entry: join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
  };
}

/** PATH with the host's Node first: code-server's launcher is `#!/usr/bin/env node`, and its extension host forks it. */
export function hostEnv(host, env = process.env) {
  const node = nodePaths(host.node);
  return { ...env, PATH: `${node.binDir}:${env.PATH ?? ''}` };
}

function codeServerVersion(host) {
  const { bin } = codeServerPaths(host);
  if (!existsSync(bin)) return undefined;
  const t = mkdtempSync(join(tmpdir(), 'asi-cs-version-'));
  try {
    const r = run(bin, ['--version'], { env: { ...cleanEnv(hostEnv(host)), XDG_CONFIG_HOME: t, XDG_DATA_HOME: t, XDG_CACHE_HOME: t } });
    // Some releases print a banner (i18next's) before the version line.
    return r.status === 0 ? r.stdout.split('\n').find((l) => /^\d+\.\d+\.\d+ [0-9a-f]+ with Code/.test(l)) : undefined;
  } finally {
    rmSync(t, { recursive: true, force: true });
  }
}

/**
 * @vscode/ripgrep's postinstall asks GitHub for rg (unreachable here) unless its download cache already holds the
 * release archive, which it then just unpacks: put Debian's rg there, under the name that package version expects.
 */
function seedRipgrepCache({ pkg, tag }) {
  const target = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' }[process.arch];
  if (!target) throw new InstallError(`No ripgrep target known for ${process.arch}`);
  const rg = run('sh', ['-c', 'command -v rg']).stdout.trim();
  if (!rg) throw new InstallError("ripgrep (Debian package ripgrep) is needed to seed code-server's ripgrep cache");
  const cacheDir = join(tmpdir(), `vscode-ripgrep-cache-${pkg}`);
  const seed = mkdtempSync(join(tmpdir(), 'asi-rg-'));
  try {
    mkdirSync(cacheDir, { recursive: true });
    run('cp', [rg, join(seed, 'rg')]);
    const r = run('tar', ['czf', join(cacheDir, `ripgrep-${tag}-${target}.tar.gz`), '-C', seed, 'rg']);
    if (r.status !== 0) throw new InstallError(`Could not seed the ripgrep cache: ${r.stderr}`);
  } finally {
    rmSync(seed, { recursive: true, force: true });
  }
}

/**
 * Installs code-server for `host` (and the Node it runs on) unless present; returns the binary. Takes one to two
 * minutes on 2 cores the first time (native modules build from source against the host Node's headers).
 */
export function ensureCodeServer(host, log = console.log) {
  const node = ensureNode(host.node, log);
  const paths = codeServerPaths(host);
  const present = () => codeServerVersion(host)?.startsWith(host.codeServer);
  if (present()) return paths.bin;
  return withLock(`code-server-${host.codeServer}`, () => (present() ? paths.bin : installCodeServer(host, node, paths, log)), log);
}

/** The Debian packages installing code-server for `host` needs. */
export function codeServerDebianPackages(host) {
  return host.ripgrep ? [...CODE_SERVER_BUILD_PACKAGES, 'ripgrep'] : CODE_SERVER_BUILD_PACKAGES;
}

function installCodeServer(host, node, paths, log) {
  ensureDebianPackages(codeServerDebianPackages(host), log);
  if (host.ripgrep) seedRipgrepCache(host.ripgrep);
  log(`Installing code-server ${host.codeServer} (VS Code ${host.vscode}) on Node ${host.node} into ${paths.dir} (once, 1–2 minutes) …`);
  rmSync(paths.dir, { recursive: true, force: true });
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(join(paths.dir, 'package.json'), '{"name":"asi-code-server-host","private":true}\n');
  const logFile = join(paths.dir, 'install.log');
  // unsafe_perm: code-server's postinstall refuses to run as root without it. yes: node-pty's postinstall calls npx,
  // which must not prompt. nodedir: node-gyp builds against the host Node's headers instead of downloading them.
  const r = run('sh', ['-c', `npm install --no-audit --no-fund --loglevel=error code-server@${host.codeServer} >"${logFile}" 2>&1`], {
    cwd: paths.dir,
    env: { ...cleanEnv(hostEnv(host)), npm_config_unsafe_perm: 'true', npm_config_yes: 'true', npm_config_nodedir: node.headersDir },
    stdio: 'inherit',
  });
  const version = codeServerVersion(host);
  if (r.status !== 0 || !version?.startsWith(host.codeServer)) {
    const tail = run('tail', ['-20', logFile]).stdout;
    throw new InstallError(`Could not install code-server ${host.codeServer} (npm exit ${r.status}); last lines of ${logFile}:\n${tail}`);
  }
  log(`code-server ${version}`);
  return paths.bin;
}

/** Everything a host phase needs: its Node, code-server, and Chromium. */
export function ensureHost(host, log = console.log) {
  ensureBrowser(log);
  return ensureCodeServer(host, log);
}

/**
 * What a test phase needs, as strings scripts/test.mjs can schedule and pass to this file's `ensure` command:
 * `node:<version>`, `host:<id>` (its Node, code-server and Chromium), `servers` (PostgreSQL and Redis), and
 * `debian:<package>,…` (one apt-get for several needs).
 */
export async function ensureNeed(need, log = console.log) {
  const [kind, arg = ''] = need.split(/:(.*)/s);
  if (kind === 'node') return ensureNode(arg, log).bin;
  if (kind === 'host') return ensureHost(hostById(arg), log);
  if (kind === 'debian') return ensureDebianPackages(arg.split(',').filter(Boolean), log);
  if (kind === 'servers') return (await import('./servers.mjs')).ensureServerPackages(log).pgBinDir;
  throw new Error(`Unknown need '${need}': node:<version>, host:<id>, servers or debian:<package>,…`);
}

// CLI: node scripts/host/hostTools.mjs node 22.15.1 | host vscode-1.103 | all | ensure <need>…
// (No top-level await: esbuild bundles this file into the CommonJS demo.)
async function cli([what, ...args]) {
  if (what === 'node') console.log(ensureNode(args[0]).bin);
  else if (what === 'host') console.log(ensureHost(hostById(args[0])));
  else if (what === 'ensure') for (const need of args) await ensureNeed(need);
  else if (what === 'all') {
    for (const v of STORE_NODE_VERSIONS) ensureNode(v);
    for (const h of HOSTS) ensureHost(h);
  } else {
    console.error('usage: node scripts/host/hostTools.mjs node <version> | host <id> | all | ensure <need>…');
    process.exitCode = 64;
  }
}
if (import.meta.url && process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  cli(process.argv.slice(2)).catch((err) => {
    console.error(err instanceof InstallError ? err.message : err);
    process.exit(1);
  });
}
