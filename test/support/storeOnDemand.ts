/**
 * What the tests of the stores opened on demand (review and trace stores) share: a store that does not exist yet must
 * answer each read exactly as the store class answers on an empty file of its own, and create nothing.
 */
import { strict as assert } from 'node:assert';

/** A store opened on demand, as the extension holds it. */
interface OnDemand {
  call(method: string, ...args: unknown[]): Promise<unknown>;
}

/** An open store of the real class, on an empty file. */
interface EmptyStore {
  close(): void;
}

/** Asks `store` and `empty` each of `reads` (method and arguments) and asserts the same answers; closes `empty`. */
export async function assertAnswersAsEmpty(
  store: unknown,
  empty: EmptyStore,
  reads: readonly (readonly [string, ...unknown[]])[],
): Promise<void> {
  try {
    for (const [method, ...args] of reads) {
      const expected = (empty as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args);
      assert.deepEqual(await (store as OnDemand).call(method, ...args), expected, method);
    }
  } finally {
    empty.close();
  }
}
