import { PostgresStoreBrowser } from './postgresBrowser';
import { RedisStoreBrowser } from './redisBrowser';
import { RemoteStoreError, redactUrl } from './remoteErrors';
import { remoteKindOf, type OpenRemoteStoreOptions, type RemoteStoreBrowser } from './remoteStore';

/** Opens the store an address names (`postgres://`, `postgresql://`, `redis://`, `rediss://`). */
export async function openRemoteStore(options: OpenRemoteStoreOptions): Promise<RemoteStoreBrowser> {
  switch (remoteKindOf(options.url)) {
    case 'postgres':
      return PostgresStoreBrowser.open(options);
    case 'redis':
      return RedisStoreBrowser.open(options);
    default:
      throw new RemoteStoreError('bad-url', `Not a PostgreSQL or Redis address: ${redactUrl(options.url)}`);
  }
}
