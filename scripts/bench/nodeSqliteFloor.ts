/**
 * A floor's own node:sqlite connection (the search floors', `getItems()`'s): its statements return rows as arrays, as
 * the store reads them where it can, so the floor never pays for an object per row that the store does not. Only the
 * module comes from src/store (its loader: Node 20 has none, and @types/node 20 does not describe it); the statements
 * are the floor's own.
 */
import { loadNodeSqlite } from '../../src/store/drivers/nodeSqliteDriver';

export interface ArrayStatement {
  all(...params: unknown[]): unknown[][];
  iterate(...params: unknown[]): Iterable<unknown[]>;
}

export function openNodeSqliteFloor(path: string, options: { readOnly: boolean }): { prepare(sql: string): ArrayStatement; close(): void } {
  const db = new (loadNodeSqlite().DatabaseSync)(path, options);
  return {
    prepare: (sql) => {
      const st = db.prepare(sql);
      if (typeof st.setReturnArrays !== 'function') throw new Error(`node:sqlite on Node ${process.version} cannot return arrays (22.16+)`);
      st.setReturnArrays(true);
      return {
        all: (...params) => st.all(...(params as never[])) as unknown[][],
        iterate: (...params) => st.iterate(...(params as never[])) as Iterable<unknown[]>,
      };
    },
    close: () => db.close(),
  };
}
