/**
 * `synchronous`, per connection: FULL by default (Python's sqlite3 leaves it so), NORMAL when asked, and OFF for
 * throwaway files (a check's scratch files: no fsync on commit or checkpoint). On both drivers.
 */
import { strict as assert } from 'node:assert';
import { SessionDatabaseError, resolveDriver, type DriverName } from '../../../../src/store';
import { openSessionConnection } from '../../../../src/store/sqlite/sessionConnection';
import { Workspace } from '../../../support/sessionHelpers';

function loads(name: DriverName): boolean {
  try {
    return resolveDriver(name) === name;
  } catch (err) {
    assert.ok(err instanceof SessionDatabaseError);
    return false;
  }
}

const level = (db: { prepare(sql: string): { get<T>(): T | undefined } }) =>
  Number(Object.values(db.prepare('PRAGMA synchronous').get<Record<string, number>>() ?? {})[0]);

describe('a session connection syncs as asked', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-sync-')));
  afterEach(() => ws.cleanup());

  for (const driver of (['better-sqlite3', 'node:sqlite'] as const).filter(loads)) {
    it(`${driver}: FULL by default, NORMAL and OFF when asked (SQLite's 2, 1, 0)`, () => {
      const path = ws.path();
      for (const [asked, expected] of [
        [undefined, 2],
        ['FULL', 2],
        ['NORMAL', 1],
        ['OFF', 0],
      ] as const) {
        const db = openSessionConnection(path, { driver, ...(asked ? { synchronous: asked } : {}) });
        try {
          assert.equal(level(db), expected, String(asked));
        } finally {
          db.close();
        }
      }
    });
  }
});
