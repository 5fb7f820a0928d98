/**
 * A session file comes from anywhere, so every connection the store opens on one does not trust its schema
 * (`PRAGMA trusted_schema = OFF`): functions and virtual tables that are not innocuous cannot run from the file's
 * views, triggers, defaults or generated columns. SQLite's own such functions are refused there whatever the setting
 * (load_extension is direct-only), so the setting is what guards against any function a driver or caller adds: the
 * test checks it on every kind of connection. Per connection, on both drivers, writing nothing.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SessionDatabaseError, openSessionDatabase, resolveDriver, type DriverName } from '../../../../src/store';
import { openSessionConnection } from '../../../../src/store/sqlite/sessionConnection';
import { Workspace, mk } from '../../../support/sessionHelpers';

const sha256 = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function loads(name: DriverName): boolean {
  try {
    return resolveDriver(name) === name;
  } catch (err) {
    assert.ok(err instanceof SessionDatabaseError);
    return false;
  }
}

const trusted = (db: { prepare(sql: string): { get<T>(): T | undefined } }) =>
  Number(Object.values(db.prepare('PRAGMA trusted_schema').get<Record<string, number>>() ?? {})[0]);

describe('session files are opened with an untrusted schema', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-untrusted-')));
  afterEach(() => ws.cleanup());

  const drivers = (['better-sqlite3', 'node:sqlite'] as const).filter(loads);
  for (const driver of drivers) {
    it(`${driver}: read-only, writable and deferred-WAL connections all run with trusted_schema off, and writing nothing`, async () => {
      const s = ws.open({ dbPath: ws.path() });
      await s.addItems([mk.user('q'), mk.assistant('a')]);
      s.close();
      const before = sha256(ws.path());
      const readonly = openSessionConnection(ws.path(), { readonly: true, driver });
      const deferred = openSessionConnection(ws.path(), { deferWal: true, driver });
      const writable = openSessionConnection(ws.path(), { driver });
      try {
        assert.equal(trusted(readonly), 0);
        assert.equal(trusted(deferred), 0);
        assert.equal(trusted(writable), 0);
      } finally {
        for (const db of [readonly, deferred, writable]) db.close();
      }
      assert.equal(sha256(ws.path()), before, 'the pragma wrote nothing');
      const inspector = openSessionDatabase(ws.path(), { driver });
      try {
        assert.equal(
          inspector.readWith((ctx) => trusted(ctx.db)),
          0,
        );
      } finally {
        inspector.close();
      }
    });
  }
});
