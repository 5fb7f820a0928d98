/** A store worker run from the sources (tsx) and a scratch folder for a suite, both gone after it. */
import { join } from 'node:path';
import { StoreClient } from '../../src/store/worker/storeClient';
import { tempDir } from './tempFiles';

export const STORE_WORKER_SOURCE = join(__dirname, '..', '..', 'src', 'store', 'worker', 'storeWorker.ts');

/** Registers the suite's hooks; the getters answer inside its tests. */
export function useWorkerClient(prefix: string): { client: () => StoreClient; dir: string } {
  const tmp = tempDir(prefix);
  let client: StoreClient | undefined;
  before(() => {
    client = new StoreClient(STORE_WORKER_SOURCE, { execArgv: ['--require', 'tsx/cjs'] });
  });
  after(async () => {
    await client?.dispose();
    tmp.cleanup();
  });
  return {
    client: () => {
      if (!client) throw new Error("the store worker starts in the suite's before hook");
      return client;
    },
    dir: tmp.dir,
  };
}
