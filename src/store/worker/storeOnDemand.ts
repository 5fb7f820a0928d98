/**
 * A store of ours (the review store, the trace store) opened only when something is written to it: reading never
 * writes, so listing, expanding and viewing add no file — neither `<file>.reviews.db` beside a user's session file
 * nor a store in the extension's storage. Until the store's file exists, a read answers what an empty store answers
 * (the store's `EmptyAnswers`) and a write opens it, creating it; from then on every call goes to the opened store.
 */
import { existsSync } from 'node:fs';
import type { MethodOf, WorkerOwnStore } from './storeClient';

/** What a store with nothing in it answers, for each method that only reads (or removes) and so creates nothing. */
export type EmptyAnswers<S, M extends keyof S & string> = {
  readonly [K in M]?: (...args: Parameters<MethodOf<S, K>>) => ReturnType<MethodOf<S, K>>;
};

export class StoreOnDemand<S, M extends keyof S & string> {
  private opened: Promise<Pick<WorkerOwnStore<S, M>, 'call' | 'close'>> | undefined;

  constructor(
    /** The store's file. */
    readonly path: string,
    /** Opens the store, creating it when missing (called once, and again after a failed open). */
    private readonly open: () => Promise<Pick<WorkerOwnStore<S, M>, 'call' | 'close'>>,
    private readonly empty: EmptyAnswers<S, M>,
  ) {}

  /** Calls `method` of the store; of a store that does not exist yet, a read gets the empty store's answer. */
  async call<K extends M>(method: K, ...args: Parameters<MethodOf<S, K>>): Promise<ReturnType<MethodOf<S, K>>> {
    if (!this.opened) {
      const answer = this.empty[method];
      // Checked on each read: another window (or process) may have created the store since.
      if (answer && !existsSync(this.path)) return answer(...args);
      const opening = this.open();
      this.opened = opening;
      // A failed open is tried again on the next call (the folder may have become writable).
      opening.catch(() => {
        if (this.opened === opening) this.opened = undefined;
      });
    }
    return (await this.opened).call(method, ...args);
  }

  /** Whether the store has been opened (a test's and a caller's way to see that reading created nothing). */
  get isOpen(): boolean {
    return this.opened !== undefined;
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    if (opened) await (await opened).close();
  }
}
