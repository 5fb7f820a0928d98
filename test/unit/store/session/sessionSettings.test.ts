/**
 * Spec §3.2 / §11: session settings accept only `limit`; unknown keys throw `InvalidArgumentError` (Python
 * `TypeError`) with `Unknown session settings: <names>`, the names sorted as Python's `sorted()` sorts them (by code
 * point) and joined by ", ".
 */
import { strict as assert } from 'node:assert';
import { InvalidArgumentError } from '../../../../src/store/errors';
import { checkSessionSettings } from '../../../../src/store/session/sessionSettings';
import type { SessionSettings } from '../../../../src/store/types';

function assertUnknown(settings: unknown, message: string): void {
  assert.throws(
    () => checkSessionSettings(settings as SessionSettings),
    (err: unknown) => {
      assert.ok(err instanceof InvalidArgumentError, `expected InvalidArgumentError, got ${String(err)}`);
      assert.equal(err.message, message);
      assert.equal(err.pythonType, 'TypeError');
      return true;
    },
  );
}

describe('checkSessionSettings', () => {
  describe('accepted settings', () => {
    const cases: [string, SessionSettings | null | undefined, SessionSettings][] = [
      ['undefined', undefined, { limit: null }],
      ['null', null, { limit: null }],
      ['empty object', {}, { limit: null }],
      ['limit null', { limit: null }, { limit: null }],
      ['limit undefined', { limit: undefined }, { limit: null }],
      ['limit 5', { limit: 5 }, { limit: 5 }],
      ['limit 0 is kept (getItems → [])', { limit: 0 }, { limit: 0 }],
      ['negative limit is kept (getItems → all)', { limit: -1 }, { limit: -1 }],
    ];
    for (const [name, input, expected] of cases) {
      it(name, () => assert.deepStrictEqual(checkSessionSettings(input), expected));
    }
  });

  describe('unknown keys', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['one unknown key', { foo: 1 }, 'Unknown session settings: foo'],
      ['unknown key next to limit', { limit: 3, max_items: 2 }, 'Unknown session settings: max_items'],
      ['sorted, joined by ", "', { zeta: 1, alpha: 2, limit: 3, mid: 4 }, 'Unknown session settings: alpha, mid, zeta'],
      [
        'binary order: upper case before underscore before lower case',
        { b: 1, a: 1, _x: 1, B: 1 },
        'Unknown session settings: B, _x, a, b',
      ],
      ['key with a null value still unknown', { foo: null }, 'Unknown session settings: foo'],
      ['integer-like keys sorted as strings', { 9: 1, 10: 1, x: 1 }, 'Unknown session settings: 10, 9, x'],
      ['keys differing only in case', { Limit: 1, LIMIT: 1 }, 'Unknown session settings: LIMIT, Limit'],
      ['non-ASCII keys by code point', { é: 1, z: 1, ß: 1 }, 'Unknown session settings: z, ß, é'],
      // Python sorts by code point: U+FF21 (fullwidth A) < U+1F600; a UTF-16 code-unit sort puts the emoji (0xD83D…) first.
      ['astral vs BMP keys by code point (Python sorted())', { '😀': 1, Ａ: 1 }, 'Unknown session settings: Ａ, 😀'],
    ];
    for (const [name, settings, message] of cases) {
      it(name, () => assertUnknown(settings, message));
    }
  });
});
