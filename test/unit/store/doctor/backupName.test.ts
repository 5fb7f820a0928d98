/**
 * The doctor's default backup name (src/store/doctor/backupName.ts) and its recognition, which keeps workspace
 * discovery from listing every backup beside the file it was taken of.
 */
import { strict as assert } from 'node:assert';
import { defaultBackupPath, isDefaultBackupPath } from '../../../../src/store/doctor/backupName';

describe('doctor: the default backup name', () => {
  it('is recognised as a backup, at any time and beside any file', () => {
    for (const when of [new Date(0), new Date('2026-12-05T09:41:07.123Z'), new Date('2099-01-31T23:59:59.999Z')])
      for (const file of ['/w/sessions.db', 'C:\\w\\agent.sqlite', '/w/a.doctor-backup-x.db'])
        assert.ok(isDefaultBackupPath(defaultBackupPath(file, when)), defaultBackupPath(file, when));
  });

  it('leaves every other name alone: session files, a backup named by the user, look-alikes', () => {
    for (const path of [
      '/w/sessions.db',
      '/w/sessions.db.bak.db',
      '/w/sessions.doctor-backup.db',
      '/w/sessions.db.doctor-backup-2026-12-05.db',
      '/w/sessions.db.doctor-backup-2026-12-05T09-41-07-123Z.db-wal',
      '/w/sessions.db.doctor-backup-2026-12-05T09:41:07.123Z.db',
    ])
      assert.equal(isDefaultBackupPath(path), false, path);
  });
});
