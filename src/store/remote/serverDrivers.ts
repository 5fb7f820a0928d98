/**
 * The PostgreSQL and Redis drivers, loaded on first use: a program that only uses SQLite sessions (and the extension
 * until a server store is opened) never loads them. `require` is CommonJS's, or the one the package's ES module
 * bundle defines from its own URL.
 */
import type * as PgModule from 'pg';
import type IoRedis from 'ioredis';

let pg: typeof PgModule | undefined;
let ioredis: typeof IoRedis | undefined;

export function loadPg(): typeof PgModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  pg ??= require('pg') as typeof PgModule;
  return pg;
}

export function loadIoRedis(): typeof IoRedis {
  // ioredis exports the class as the module itself (and as `default` on newer versions).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const m = require('ioredis') as typeof IoRedis & { default?: typeof IoRedis };
  ioredis ??= m.default ?? m;
  return ioredis;
}
