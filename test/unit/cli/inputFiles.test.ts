/**
 * The CLI's whole-file inputs (a review export, a dataset to check, a tool list, an OTLP JSON file) are read only
 * within their bound, and the review data an import takes meets the same limits as a verdict written in the view.
 */
import { strict as assert } from 'node:assert';
import { closeSync, existsSync, mkdirSync, openSync, ftruncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BadInputError, EXIT, NotFoundError, exitCodeOf } from '../../../src/cli/exitCodes';
import { INPUT_FILE_BOUNDS, readInputText } from '../../../src/cli/inputFiles';
import { checkReviewData } from '../../../src/store/reviews/reviewStore';
import { ReviewStoreError } from '../../../src/store/reviews/reviewErrors';
import { runCliCaptured } from '../../support/cliCapture';
import { tempDir } from '../../support/tempFiles';

describe('CLI input files', () => {
  const tmp = tempDir('asi-input-files-');

  /** A sparse file of `bytes`: the bound is checked before anything is read, so no memory is spent on it. */
  function sparse(name: string, bytes: number): string {
    const p = join(tmp.dir, name);
    const fd = openSync(p, 'w');
    try {
      ftruncateSync(fd, bytes);
    } finally {
      closeSync(fd);
    }
    return p;
  }

  it('refuses a file past its bound with exit 4, naming the bound; a file at the bound is read', () => {
    for (const kind of ['reviews', 'tools', 'otlp'] as const) {
      const bound = INPUT_FILE_BOUNDS[kind];
      const over = sparse(`${kind}-over`, bound + 1);
      assert.throws(
        () => readInputText(over, kind),
        (e: unknown) =>
          e instanceof BadInputError &&
          /may be at most \d+ MiB \(the bound of this input\)/.test(e.message) &&
          exitCodeOf(e) === EXIT.badFile,
      );
      assert.equal(readInputText(sparse(`${kind}-at`, bound), kind).length, bound);
    }
  });

  it('a missing file is exit 3 and a folder exit 4', () => {
    assert.throws(
      () => readInputText(join(tmp.dir, 'nope.json'), 'reviews'),
      (e: unknown) => e instanceof NotFoundError && exitCodeOf(e) === EXIT.notFound,
    );
    const dir = join(tmp.dir, 'a-folder');
    mkdirSync(dir);
    assert.throws(
      () => readInputText(dir, 'dataset'),
      (e: unknown) => e instanceof BadInputError && exitCodeOf(e) === EXIT.badFile,
    );
    writeFileSync(join(tmp.dir, 'ok.json'), '{"a":1}');
    assert.equal(readInputText(join(tmp.dir, 'ok.json'), 'reviews'), '{"a":1}');
  });

  describe('imported review data meets the limits of a verdict written by hand', () => {
    const key = 'a'.repeat(32);
    const ref = { sessionId: 's', branchId: 'main', turn: 1, turnKey: key, createdMs: 1, updatedMs: 2 };
    const data = (part: Record<string, unknown>) => ({ format: 'agent-session-inspector/reviews', version: 1, ...part });
    const refused = (d: unknown, pattern: RegExp) =>
      assert.throws(
        () => checkReviewData(d),
        (e: unknown) => e instanceof ReviewStoreError && pattern.test(e.message),
      );

    it('at most 20 tags on a turn, counted as stored (normalized, once)', () => {
      const tags = Array.from({ length: 21 }, (_, i) => `tag-${i}`);
      refused(data({ turnReviews: [{ ...ref, verdict: 'bad', tags, note: '' }] }), /at most 20 tags/);
      // The same tag spelled 30 ways is one tag.
      const same = Array.from({ length: 30 }, (_, i) => (i % 2 ? ' Wrong Tool ' : 'wrong-tool'));
      assert.equal(checkReviewData(data({ turnReviews: [{ ...ref, verdict: 'bad', tags: same, note: '' }] })).turnReviews.length, 1);
    });

    it('a pairwise verdict compares two different branches', () => {
      const p = { sessionId: 's', turn: 1, leftKey: key, rightKey: key, outcome: 'left', reason: '', createdMs: 1, updatedMs: 2 };
      refused(data({ pairwise: [{ ...p, leftBranch: 'main', rightBranch: 'main' }] }), /two different branches/);
      assert.equal(checkReviewData(data({ pairwise: [{ ...p, leftBranch: 'main', rightBranch: 'b' }] })).pairwise.length, 1);
    });

    it('a correction is not blank', () => {
      const c = { ...ref, itemKey: 'b'.repeat(32) };
      refused(data({ corrections: [{ ...c, text: '  \n ' }] }), /needs the answer it should have given/);
      assert.equal(checkReviewData(data({ corrections: [{ ...c, text: 'Rain, 7 °C.' }] })).corrections.length, 1);
    });

    it('source and reviewer are text or null on every record: an object, a list, a number or a boolean is refused', () => {
      const records = {
        turnReviews: { ...ref, verdict: 'good', tags: [], note: '' },
        pairwise: { ...ref, leftBranch: 'main', rightBranch: 'b', leftKey: key, rightKey: key, outcome: 'left', reason: '' },
        corrections: { ...ref, itemKey: 'b'.repeat(32), text: 'Rain.' },
      };
      for (const [list, record] of Object.entries(records)) {
        for (const field of ['source', 'reviewer']) {
          for (const value of [{ a: 1 }, [], ['x', 'y'], 12345, true])
            refused(
              data({ [list]: [record, { ...record, [field]: value }] }),
              new RegExp(`^${list}\\[1\\]: ${field} must be text or null\\.$`),
            );
          for (const value of ['reviews.db', null, undefined])
            assert.equal(checkReviewData(data({ [list]: [{ ...record, [field]: value }] }))[list as 'pairwise'].length, 1);
        }
      }
    });
  });

  it('review import refuses bad review data with exit 4 before the store is opened: no store file is left behind', async () => {
    const file = join(tmp.dir, 'spread.json');
    const turn = { sessionId: 's', branchId: 'main', turn: 1, turnKey: 'a'.repeat(32), verdict: 'good', tags: [], note: 'n' };
    writeFileSync(
      file,
      JSON.stringify({
        format: 'agent-session-inspector/reviews',
        version: 1,
        turnReviews: [{ ...turn, source: [], reviewer: ['x', 'y'], createdMs: 1000, updatedMs: 2000 }],
      }),
    );
    const store = join(tmp.dir, 'never.reviews.db');
    const r = await runCliCaptured('review', 'import', file, '--store', store);
    assert.equal(r.code, EXIT.badFile, r.stderr);
    assert.match(r.stderr, /turnReviews\[0\]: source must be text or null/);
    assert.equal(existsSync(store), false);
  });
});
