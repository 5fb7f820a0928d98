// Real PostgreSQL and Redis servers for tests, the benchmark and the demo: Debian's `postgresql` and `redis-server`,
// installed on first use (hostTools' ensureDebianPackages), each started on a free 127.0.0.1 port with a throwaway
// directory under os.tmpdir() and removed again by stop(). A process that exits without calling stop() (a crashed or
// interrupted test run) still kills its servers and removes their directories in a synchronous 'exit' handler.
//
// PostgreSQL: initdb with password (SCRAM) authentication on TCP and trust on the Unix socket, which lives inside the
// data directory, so only this process's setup code uses it. initdb and postgres refuse to run as root: as root they
// run as Debian's `postgres` user through runuser. Durability is off (fsync, synchronous_commit, full_page_writes):
// the data is thrown away anyway.
//
// Plain .mjs (types in servers.d.mts) so scripts/test.mjs, the mocha specs and esbuild bundles can all import it.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { InstallError, ensureDebianPackages } from './hostTools.mjs';

const PG_ROOT = '/usr/lib/postgresql';
const REDIS_SERVER = '/usr/bin/redis-server';
/** The OS user initdb and postgres run as when this process is root (created by Debian's postgresql-common). */
const PG_OS_USER = 'postgres';
/** The cluster's superuser: reached only over the Unix socket (trust) by the setup code here. */
const PG_SUPERUSER = 'postgres';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

const noop = () => {};
/** Installing packages takes a while: say so even when the caller wants no log. */
const installLog = (log) => (log === noop ? (line) => console.error(line) : log);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const randomPassword = () => randomBytes(12).toString('hex');

/** Where the server binaries are, or undefined when a package is missing. */
function findServerBinaries() {
  const majors = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter((d) => /^\d+$/.test(d) && existsSync(join(PG_ROOT, d, 'bin', 'initdb')) && existsSync(join(PG_ROOT, d, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return {
    pgBinDir: majors[0] === undefined ? undefined : join(PG_ROOT, majors[0], 'bin'),
    redisServer: existsSync(REDIS_SERVER) ? REDIS_SERVER : undefined,
  };
}

/** The Debian packages the servers come from. */
export const SERVER_PACKAGES = ['postgresql', 'redis-server'];

let binaries;
/**
 * Installs `postgresql` and `redis-server` unless present (needs root and Debian's repositories the first time) and
 * returns the PostgreSQL bin directory (highest major under /usr/lib/postgresql) and the redis-server binary.
 */
export function ensureServerPackages(log = console.log) {
  if (binaries) return binaries;
  ensureDebianPackages(SERVER_PACKAGES, log);
  const found = findServerBinaries();
  if (!found.pgBinDir)
    throw new InstallError(`No PostgreSQL server under ${PG_ROOT}/<major>/bin although package postgresql is installed.`);
  if (!found.redisServer) throw new InstallError(`No ${REDIS_SERVER} although package redis-server is installed.`);
  const version = (bin) => spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  binaries = {
    pgBinDir: found.pgBinDir,
    redisServer: found.redisServer,
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" → "15.18"; "Redis server v=7.0.15 sha=…" → "7.0.15"
    postgresVersion: /\) (\S+)/.exec(version(join(found.pgBinDir, 'postgres')))?.[1] ?? 'unknown',
    redisVersion: /v=(\S+)/.exec(version(found.redisServer))?.[1] ?? 'unknown',
  };
  return binaries;
}

/** A TCP port nobody listens on right now (bound to port 0 and released); callers retry if it is taken meanwhile. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// ── processes ───────────────────────────────────────────────────────────────────────────────────────────────────

/** Processes whose parent is `pid` (PostgreSQL's backends: each is its own process group, so only /proc finds them). */
function childPids(pid) {
  const out = [];
  let entries = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may itself hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Alive and not a zombie (a child of this process that exited is a zombie until Node reaps it). */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Waits synchronously (in an 'exit' handler nothing asynchronous runs any more) until the pids are gone. */
function waitGoneSync(pids, ms) {
  const until = Date.now() + ms;
  while (pids.some(isAlive) && Date.now() < until) Atomics.wait(sleeper, 0, 0, 20);
  return !pids.some(isAlive);
}

function removeDir(dir) {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  } catch {
    // best effort: a directory under os.tmpdir()
  }
}

function tail(file, lines = 15) {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Waits for the child's exit; false when it is still running after `ms`. */
function exited(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// ── cleanup of servers nobody stopped ───────────────────────────────────────────────────────────────────────────

/** Running servers: each with a synchronous kill for the 'exit' handler. */
const live = new Set();
let cleanupInstalled = false;

function killAllSync() {
  for (const server of [...live]) {
    live.delete(server);
    try {
      server.killSync();
    } catch {
      // keep going: the next server still needs killing
    }
  }
}

function onSignal(sig) {
  killAllSync();
  process.removeListener(sig, onSignal);
  // Nobody else handles it: die of it as if we had never listened.
  if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
}

function track(server) {
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.on('exit', killAllSync);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, onSignal);
  }
  live.add(server);
}

// ── PostgreSQL ──────────────────────────────────────────────────────────────────────────────────────────────────

function osUser(name) {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new InstallError(
      `User '${name}' is missing: PostgreSQL refuses to run as root, and Debian's postgresql package creates '${name}'.`,
    );
  }
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/** [command, args] that runs `bin args` as PG_OS_USER when this process is root, else directly. */
function asPgUser(bin, args) {
  return process.getuid?.() === 0 ? ['runuser', ['-u', PG_OS_USER, '--', bin, ...args]] : [bin, args];
}

async function connectWhenReady(config, child, logFile) {
  const until = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}) while starting:\n${tail(logFile)}`);
    }
    const client = new pg.Client(config);
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(noop);
      if (Date.now() > until)
        throw new Error(`postgres did not accept connections within ${READY_TIMEOUT_MS} ms (${err.message}):\n${tail(logFile)}`);
      await sleep(50);
    }
  }
}

/**
 * Starts a throwaway PostgreSQL server on 127.0.0.1: `user` (created with LOGIN CREATEDB, password `password`)
 * owns `database`. TCP logins need the password (SCRAM); a wrong one fails with SQLSTATE 28P01.
 */
export async function startPostgres({ password = randomPassword(), user = 'asi', database = 'asi', log = noop } = {}) {
  const { pgBinDir, postgresVersion } = ensureServerPackages(installLog(log));
  const root = process.getuid?.() === 0;
  const owner = root ? osUser(PG_OS_USER) : undefined;

  const base = mkdtempSync(join(tmpdir(), 'asi-pg-'));
  const dataDir = join(base, 'data');
  const logFile = join(base, 'postgres.log');
  const superPassword = randomPassword();
  try {
    const pwFile = join(base, 'superuser-password');
    writeFileSync(pwFile, `${superPassword}\n`, { mode: 0o600 });
    if (owner) {
      chownSync(base, owner.uid, owner.gid);
      chownSync(pwFile, owner.uid, owner.gid);
    }
    const t = Date.now();
    // C.UTF-8 is built into Debian 12's glibc; a system without it still has C.
    let init;
    for (const locale of ['C.UTF-8', 'C']) {
      const [cmd, args] = asPgUser(join(pgBinDir, 'initdb'), [
        '-D',
        dataDir,
        `--username=${PG_SUPERUSER}`,
        `--pwfile=${pwFile}`,
        '--auth-local=trust',
        '--auth-host=scram-sha-256',
        '--encoding=UTF8',
        `--locale=${locale}`,
        '--no-sync',
        '--no-instructions',
      ]);
      init = spawnSync(cmd, args, { cwd: base, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      if (init.status === 0 || !/locale/i.test(init.stderr ?? '')) break;
      removeDir(dataDir);
    }
    if (init.status !== 0) {
      const hint = owner ? ` (initdb runs as '${PG_OS_USER}': it must be able to enter ${tmpdir()})` : '';
      throw new Error(`initdb failed (exit ${init.status ?? init.signal})${hint}:\n${(init.stderr || init.stdout || '').trim()}`);
    }
    rmSync(pwFile);
    log(`initdb ${dataDir} in ${Date.now() - t} ms`);
  } catch (err) {
    removeDir(base);
    throw err;
  }

  // A free port can be taken between finding and binding it: postgres then exits at once, and we try another.
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const fd = openSync(logFile, 'a');
    const [cmd, args] = asPgUser(join(pgBinDir, 'postgres'), [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dataDir}`,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ]);
    const child = spawn(cmd, args, { cwd: base, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.unref();
    child.on('error', noop);
    /** The postmaster: the child itself, or (through runuser) the pid in postmaster.pid. */
    let postmaster = root ? undefined : child.pid;
    const postmasterPid = () => {
      if (postmaster === undefined) {
        const line = existsSync(join(dataDir, 'postmaster.pid'))
          ? readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]
          : '';
        if (/^\d+$/.test(line ?? '')) postmaster = Number(line);
      }
      return postmaster;
    };
    const server = {
      killSync() {
        const pm = postmasterPid();
        if (pm === undefined) {
          // runuser forwards SIGTERM to postgres (a smart shutdown).
          if (child.pid !== undefined) signal(child.pid, 'SIGTERM');
        } else {
          const all = [pm, ...childPids(pm)];
          for (const pid of all) signal(pid, 'SIGCONT');
          if (child.pid !== undefined && child.pid !== pm) signal(child.pid, 'SIGCONT'); // runuser, see resume()
          signal(pm, 'SIGQUIT'); // immediate shutdown: the postmaster stops its backends and removes its shared memory
          if (!waitGoneSync(all, 3000)) for (const pid of [pm, ...childPids(pm)]) signal(pid, 'SIGKILL');
        }
        removeDir(base);
      },
    };
    track(server);

    let admin;
    try {
      admin = await connectWhenReady({ host: dataDir, port, user: PG_SUPERUSER, database: 'postgres' }, child, logFile);
    } catch (err) {
      lastError = err;
      live.delete(server);
      if (child.exitCode === null && child.signalCode === null) {
        server.killSync();
        throw err;
      }
      if (!/could not bind|Address already in use/i.test(tail(logFile))) {
        removeDir(base);
        throw err;
      }
      continue;
    }
    try {
      if (user !== PG_SUPERUSER) {
        await admin.query(`CREATE ROLE ${admin.escapeIdentifier(user)} LOGIN CREATEDB PASSWORD ${admin.escapeLiteral(password)}`);
      } else {
        await admin.query(`ALTER ROLE ${admin.escapeIdentifier(user)} PASSWORD ${admin.escapeLiteral(password)}`);
      }
      if (database !== 'postgres') {
        await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)} OWNER ${admin.escapeIdentifier(user)}`);
      }
    } catch (err) {
      live.delete(server);
      server.killSync();
      throw err;
    } finally {
      await admin.end().catch(noop);
    }
    postmasterPid();

    let stopping;
    let paused = false;
    /** Freezes the postmaster and every backend (SIGSTOP): connections stay open but nothing answers. */
    const pause = () => {
      const pm = postmasterPid();
      if (pm === undefined) throw new Error('postgres is not running');
      signal(pm, 'SIGSTOP'); // first, so it forks no backend we would miss
      for (const pid of childPids(pm)) signal(pid, 'SIGSTOP');
      paused = true;
    };
    const resume = () => {
      const pm = postmasterPid();
      if (pm === undefined) return;
      for (const pid of childPids(pm)) signal(pid, 'SIGCONT');
      signal(pm, 'SIGCONT');
      // runuser stops itself when it sees its child stopped, and would then never exit after postgres does.
      if (root && child.pid !== undefined) signal(child.pid, 'SIGCONT');
      paused = false;
    };
    const url = (db) =>
      `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(db)}`;
    return {
      host: '127.0.0.1',
      port,
      user,
      password,
      database,
      url: url(database),
      dataDir,
      socketDir: dataDir,
      version: postgresVersion,
      pid: postmasterPid(),
      /** Creates a database owned by `user` (over the Unix socket, as superuser) and returns its URL. */
      async createDatabase(name) {
        const client = new pg.Client({ host: dataDir, port, user: PG_SUPERUSER, database: 'postgres' });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)} OWNER ${client.escapeIdentifier(user)}`);
        } finally {
          await client.end().catch(noop);
        }
        return url(name);
      },
      pause,
      resume,
      /** Fast shutdown (open sessions are ended), then the data directory is removed. Idempotent. */
      stop() {
        stopping ??= (async () => {
          live.delete(server);
          if (paused) resume();
          const pm = postmasterPid();
          if (pm !== undefined) signal(pm, 'SIGINT');
          else if (child.pid !== undefined) signal(child.pid, 'SIGTERM');
          if (!(await exited(child, STOP_TIMEOUT_MS))) server.killSync();
          removeDir(base);
        })();
        return stopping;
      },
    };
  }
  removeDir(base);
  throw lastError;
}

// ── Redis ───────────────────────────────────────────────────────────────────────────────────────────────────────

/** One PING on a raw socket: true when the server answers at all (+PONG, or -NOAUTH when it wants a password). */
function pingOnce(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) done(/^(\+PONG|-NOAUTH)/.test(answer));
    });
  });
}

/** A value for redis.conf: quoted, with the escapes its parser understands. */
const confString = (s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;

/** Starts a throwaway redis-server on 127.0.0.1 (no persistence); with `password`, every client must AUTH. */
export async function startRedis({ password, log = noop } = {}) {
  const { redisServer, redisVersion } = ensureServerPackages(installLog(log));
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'asi-redis-'));
    const conf = join(dir, 'redis.conf');
    const logFile = join(dir, 'redis.log');
    // A config file rather than arguments: the password stays out of `ps`.
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'save ""',
        'appendonly no',
        `dir ${confString(dir)}`,
        'daemonize no',
        'logfile ""',
        ...(password === undefined ? [] : [`requirepass ${confString(password)}`]),
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const fd = openSync(logFile, 'a');
    const child = spawn(redisServer, [conf], { cwd: dir, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.unref();
    child.on('error', noop);
    const server = {
      killSync() {
        if (child.pid !== undefined) {
          signal(child.pid, 'SIGCONT');
          signal(child.pid, 'SIGKILL');
        }
        removeDir(dir);
      },
    };
    track(server);

    const until = Date.now() + READY_TIMEOUT_MS;
    let ready = false;
    while (!ready && child.exitCode === null && child.signalCode === null && Date.now() < until) {
      ready = await pingOnce(port);
      if (!ready) await sleep(30);
    }
    if (!ready) {
      const why = tail(logFile);
      live.delete(server);
      server.killSync();
      lastError = new Error(`redis-server did not start on port ${port}:\n${why}`);
      if (/Address already in use/i.test(why)) continue;
      throw lastError;
    }
    log(`redis-server ${redisVersion} on 127.0.0.1:${port}`);

    let stopping;
    const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
    return {
      host: '127.0.0.1',
      port,
      password,
      url: `redis://${auth}127.0.0.1:${port}/0`,
      dir,
      version: redisVersion,
      pid: child.pid,
      /** Freezes the server (SIGSTOP): connections stay open but nothing answers. */
      pause() {
        if (child.pid !== undefined) signal(child.pid, 'SIGSTOP');
      },
      resume() {
        if (child.pid !== undefined) signal(child.pid, 'SIGCONT');
      },
      /** SIGTERM (no save: persistence is off), then the directory is removed. Idempotent. */
      stop() {
        stopping ??= (async () => {
          live.delete(server);
          if (child.pid !== undefined) {
            signal(child.pid, 'SIGCONT');
            signal(child.pid, 'SIGTERM');
          }
          if (!(await exited(child, STOP_TIMEOUT_MS))) server.killSync();
          removeDir(dir);
        })();
        return stopping;
      },
    };
  }
  throw lastError;
}
