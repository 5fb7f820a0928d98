// Types for servers.mjs (plain JavaScript so scripts/test.mjs runs it without a build).
export interface ServerBinaries {
  /** /usr/lib/postgresql/<highest major>/bin */
  pgBinDir: string;
  redisServer: string;
  /** e.g. "15.18" */
  postgresVersion: string;
  /** e.g. "7.0.15" */
  redisVersion: string;
}

/** The Debian packages the servers come from. */
export const SERVER_PACKAGES: string[];

interface Pausable {
  /** Freezes the server's processes (SIGSTOP): connections stay open, nothing answers until resume(). */
  pause(): void;
  /** SIGCONT: the server answers again, queued requests included. */
  resume(): void;
  /** Shuts the server down and removes its directory; idempotent. */
  stop(): Promise<void>;
}

export interface PostgresServer extends Pausable {
  host: '127.0.0.1';
  port: number;
  /** Owns `database`; LOGIN CREATEDB, not a superuser (unless named `postgres`). */
  user: string;
  password: string;
  database: string;
  /** postgresql://user:password@127.0.0.1:port/database */
  url: string;
  dataDir: string;
  /** Where the Unix socket is (trust auth for the superuser `postgres`: setup code only). */
  socketDir: string;
  version: string;
  /** The postmaster's pid. */
  pid: number | undefined;
  /** Creates a database owned by `user` and returns its URL. */
  createDatabase(name: string): Promise<string>;
}

export interface RedisServer extends Pausable {
  host: '127.0.0.1';
  port: number;
  password: string | undefined;
  /** redis://[:password@]127.0.0.1:port/0 */
  url: string;
  dir: string;
  version: string;
  pid: number | undefined;
}

type Log = (line: string) => void;

export function ensureServerPackages(log?: Log): ServerBinaries;
export function freePort(): Promise<number>;
export function startPostgres(options?: { password?: string; user?: string; database?: string; log?: Log }): Promise<PostgresServer>;
export function startRedis(options?: { password?: string; log?: Log }): Promise<RedisServer>;
