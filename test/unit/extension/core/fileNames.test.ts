/**
 * The file names save dialogs offer (src/extension/core/fileNames.ts), made from a session id or a branch name that
 * anyone may have written: never a path, never outside the folder it is joined to.
 */
import { strict as assert } from 'node:assert';
import { basename, join } from 'node:path';
import { safeFileName } from '../../../../src/extension/core/fileNames';

describe('safeFileName', () => {
  it('keeps letters and digits of any script, dots, underscores and dashes', () => {
    assert.equal(safeFileName('weather-trip_2.v1'), 'weather-trip_2.v1');
    assert.equal(safeFileName('날씨 여행'), '날씨-여행');
  });

  it('makes no path of a hostile id: no separator, no leading dot, bounded', () => {
    for (const id of ['../../../home/u/.config/x', '..\\..\\Windows\\x', '/etc/passwd', '..', '.', '', ' ', 'a/'.repeat(200)]) {
      const name = safeFileName(id);
      assert.ok(name.length > 0 && name.length <= 80, `${id} → ${name}`);
      assert.doesNotMatch(name, /[/\\]|^\./, `${id} → ${name}`);
      assert.equal(basename(join('/folder', `${name}.jsonl`)), `${name}.jsonl`);
    }
    assert.equal(safeFileName('../../../home/u/.config/x'), 'home-u-.config-x');
    assert.equal(safeFileName('..'), 'session');
  });
});
