// One real PostgreSQL and one real Redis server per test process (scripts/host/servers.mjs), started lazily by the
// first spec that asks and stopped by mocha's root afterAll hook (this file is in test/remote/.mocharc.json's
// `require`) or, failing that, by servers.mjs's exit handler. Specs stay apart through a fresh database or key prefix
// each, not through servers of their own: a PostgreSQL start costs about two seconds.
import { randomBytes } from 'node:crypto';
import { startPostgres, startRedis, type PostgresServer, type RedisServer } from '../../scripts/host/servers.mjs';

let postgres: Promise<PostgresServer> | undefined;
let redis: Promise<RedisServer> | undefined;

function announce(what: string, started: number): void {
  console.error(`[servers] ${what} (ready after ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** The process's PostgreSQL server (password auth over TCP), started on first use. */
export function sharedPostgres(): Promise<PostgresServer> {
  postgres ??= (async () => {
    const t = Date.now();
    const server = await startPostgres();
    announce(`PostgreSQL ${server.version} on 127.0.0.1:${server.port}, data in ${server.dataDir}`, t);
    return server;
  })();
  return postgres;
}

/** The process's Redis server (with a password), started on first use. */
export function sharedRedis(): Promise<RedisServer> {
  redis ??= (async () => {
    const t = Date.now();
    const server = await startRedis({ password: randomBytes(12).toString('hex') });
    announce(`Redis ${server.version} on 127.0.0.1:${server.port}`, t);
    return server;
  })();
  return redis;
}

let databases = 0;
/** A new, empty database in the shared server, owned by its user: its URL. */
export async function freshPostgresDatabase(name?: string): Promise<string> {
  const server = await sharedPostgres();
  return server.createDatabase(name ?? `t${process.pid}_${++databases}_${randomBytes(3).toString('hex')}`);
}

let prefixes = 0;
/** A key prefix no other spec in this run uses, e.g. "asi-test:3-1a2b3c:". */
export function freshRedisPrefix(): string {
  return `asi-test:${++prefixes}-${randomBytes(3).toString('hex')}:`;
}

/** Stops whatever was started (a later sharedPostgres()/sharedRedis() starts a new one). */
export async function stopSharedServers(): Promise<void> {
  const started = [postgres, redis];
  postgres = undefined;
  redis = undefined;
  await Promise.all(started.map(async (p) => (await p?.catch(() => undefined))?.stop()));
}

/** Root hooks, for mocha configs that `require` this file. */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    await stopSharedServers();
  },
};
