/**
 * The review store on a real SQLite file (either driver: the store phases run this on node:sqlite too): verdicts,
 * tags and notes merged field by field, pairwise verdicts found from either side, corrections, export and import
 * (newer wins, one bad record imports nothing), orphans, a copied session file keeping its reviews, two processes
 * writing at once losing nothing, and the files it must refuse untouched.
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../../../src/store';
import { canonicalJson, contentKey } from '../../../../src/store/reviews/contentKey';
import { ReviewStoreError } from '../../../../src/store/reviews/reviewErrors';
import { matchReviews, turnKeyOf } from '../../../../src/store/reviews/reviewMatching';
import { ReviewStore, normalizeTag } from '../../../../src/store/reviews/reviewStore';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { copyFixture, tempDir } from '../../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..', '..');
const K1 = contentKey({ role: 'user', content: 'one' });
const K2 = contentKey({ role: 'user', content: 'two' });
const ref = (turn: number, turnKey = K1, branchId = 'main') => ({ sessionId: 's', branchId, turn, turnKey });
const isInvalid = (e: unknown) => e instanceof ReviewStoreError && e.problem === 'invalid';
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('ReviewStore', () => {
  const tmp = tempDir('asi-reviews-');
  let store: ReviewStore;
  let n = 0;
  beforeEach(() => {
    store = ReviewStore.open(join(tmp.dir, `r${++n}.db`));
  });
  afterEach(() => store.close());
  after(() => tmp.cleanup());

  it('keys content, not its spelling: Python-spaced and compact JSON, any key order, give one key', () => {
    const python = JSON.parse('{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}') as unknown;
    const ours = JSON.parse('{"content":[{"text":"Hi","type":"input_text"}],"role":"user"}') as unknown;
    assert.equal(contentKey(python), contentKey(ours));
    assert.notEqual(contentKey(python), contentKey({ role: 'user', content: 'Hi' }));
    assert.equal(canonicalJson({ b: 1, a: [1, { d: null, c: 'x' }] }), '{"a":[1,{"c":"x","d":null}],"b":1}');
    assert.match(contentKey('x'), /^[0-9a-f]{32}$/);
  });

  it('merges a change into the turn review field by field; an empty review goes', () => {
    const first = store.setTurnReview(ref(3), { verdict: 'bad', addTags: ['Wrong tool'] }, { source: 'a.db', reviewer: 'ana' }, 1000)!;
    assert.deepEqual([first.verdict, first.tags, first.note, first.createdMs, first.updatedMs], ['bad', ['wrong-tool'], '', 1000, 1000]);
    // Another window adds a note and a tag: the verdict and the first tag stay.
    const second = store.setTurnReview(ref(3), { note: 'called refund for a weather question', addTags: ['hallucination'] }, {}, 2000)!;
    assert.deepEqual(
      [second.verdict, second.tags, second.note, second.createdMs, second.updatedMs, second.source, second.reviewer],
      ['bad', ['hallucination', 'wrong-tool'], 'called refund for a weather question', 1000, 2000, 'a.db', 'ana'],
    );
    const third = store.setTurnReview(ref(3), { verdict: 'good', removeTags: ['wrong-tool'] }, {}, 3000)!;
    assert.deepEqual([third.verdict, third.tags], ['good', ['hallucination']]);
    // Another turn, and the same turn number holding other content (a different conversation there): separate reviews.
    store.setTurnReview(ref(4), { verdict: 'good' });
    store.setTurnReview(ref(3, K2), { verdict: 'bad' });
    assert.equal(store.turnReviews('s').length, 3);
    assert.equal(store.setTurnReview(ref(3), { verdict: null, tags: [], note: '' }), null);
    assert.deepEqual(
      store.turnReviews('s', 'main').map((r) => [r.turn, r.turnKey === K1, r.verdict]),
      [
        [3, false, 'bad'],
        [4, true, 'good'],
      ],
    );
    assert.deepEqual(store.tagsInUse(), []);
    store.setTurnReview(ref(5), { tags: ['too-slow', 'refused'] });
    store.setTurnReview(ref(6), { tags: ['too-slow'] });
    assert.deepEqual(store.tagsInUse(), [
      { tag: 'too-slow', count: 2 },
      { tag: 'refused', count: 1 },
    ]);
  });

  it('refuses what is not a review with a typed error, and writes nothing', () => {
    assert.throws(() => store.setTurnReview(ref(1), { verdict: 'meh' as never }), isInvalid);
    assert.throws(() => store.setTurnReview(ref(0), { verdict: 'good' }), isInvalid);
    assert.throws(() => store.setTurnReview({ ...ref(1), turnKey: 'row-17' }, { verdict: 'good' }), isInvalid);
    assert.throws(() => store.setTurnReview(ref(1), { addTags: ['no/slash'] }), isInvalid);
    assert.throws(() => store.setTurnReview(ref(1), { note: 'x'.repeat(10_001) }), isInvalid);
    assert.throws(() => store.setTurnReview(ref(1), { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }), isInvalid);
    assert.deepEqual(store.counts(), { turnReviews: 0, pairwise: 0, corrections: 0 });
    assert.equal(normalizeTag('  Too  Costly '), 'too-costly');
    assert.equal(normalizeTag('한국어'), '한국어');
  });

  it('finds a pairwise verdict from either side of the comparison, with its models', () => {
    store.setPairwise(
      {
        sessionId: 's',
        leftBranch: 'retry-mini',
        rightBranch: 'main',
        turn: 3,
        leftKey: K2,
        rightKey: K1,
        outcome: 'left',
        reason: 'shorter',
        leftModel: 'gpt-4.1-mini',
        rightModel: null,
      },
      {},
      10,
    );
    const [p] = store.pairwiseReviews('s', ['main', 'retry-mini']);
    assert.deepEqual(
      [p!.leftBranch, p!.rightBranch, p!.leftKey, p!.rightKey, p!.outcome, p!.leftModel, p!.rightModel],
      ['main', 'retry-mini', K1, K2, 'right', null, 'gpt-4.1-mini'],
    );
    // Changed from the other side: one verdict, replaced.
    store.setPairwise(
      {
        sessionId: 's',
        leftBranch: 'main',
        rightBranch: 'retry-mini',
        turn: 3,
        leftKey: K1,
        rightKey: K2,
        outcome: 'tie',
        reason: 'same facts',
        leftModel: null,
        rightModel: null,
      },
      {},
      20,
    );
    const all = store.pairwiseReviews('s');
    assert.equal(all.length, 1);
    // Removed from either side too (checked after the reads below).
    const removeFrom = { sessionId: 's', leftBranch: 'retry-mini', rightBranch: 'main', turn: 3, leftKey: K2, rightKey: K1 };
    assert.deepEqual(
      [all[0]!.outcome, all[0]!.reason, all[0]!.rightModel, all[0]!.createdMs, all[0]!.updatedMs],
      ['tie', 'same facts', 'gpt-4.1-mini', 10, 20],
    );
    assert.equal(store.deletePairwise(removeFrom), true);
    assert.equal(store.deletePairwise(removeFrom), false);
    assert.deepEqual(store.pairwiseReviews('s'), []);
    assert.throws(
      () =>
        store.setPairwise({
          sessionId: 's',
          leftBranch: 'a',
          rightBranch: 'a',
          turn: 1,
          leftKey: K1,
          rightKey: K1,
          outcome: 'tie',
          reason: '',
          leftModel: null,
          rightModel: null,
        }),
      isInvalid,
    );
  });

  it('keeps a correction beside the item it corrects, replaced when written again, removable', () => {
    const item = contentKey({ role: 'assistant', content: 'It is sunny.' });
    store.setCorrection({ ...ref(2), itemKey: item, text: 'It is raining in Oslo.' }, {}, 5);
    store.setCorrection({ ...ref(2), itemKey: item, text: 'It is raining in Oslo (7 °C).' }, {}, 6);
    const [c] = store.corrections('s', 'main');
    assert.deepEqual([c!.text, c!.createdMs, c!.updatedMs], ['It is raining in Oslo (7 °C).', 5, 6]);
    assert.throws(() => store.setCorrection({ ...ref(2), itemKey: item, text: '   ' }), isInvalid);
    assert.equal(store.deleteCorrection({ ...ref(2), itemKey: item }), true);
    assert.equal(store.deleteCorrection({ ...ref(2), itemKey: item }), false);
  });

  it('exports review data that imports back the same; newer wins on import; one bad record imports nothing', () => {
    store.setTurnReview(ref(1), { verdict: 'good', tags: ['refused'], note: 'n' }, { reviewer: 'ana' }, 100);
    store.setPairwise(
      {
        sessionId: 's',
        leftBranch: 'main',
        rightBranch: 'alt',
        turn: 2,
        leftKey: K1,
        rightKey: K2,
        outcome: 'both-bad',
        reason: 'r',
        leftModel: null,
        rightModel: 'o3',
      },
      {},
      100,
    );
    store.setCorrection({ ...ref(1), itemKey: K2, text: 'better' }, {}, 100);
    const data = store.exportData('s');
    const other = ReviewStore.open(join(tmp.dir, `copy${n}.db`));
    try {
      assert.deepEqual(other.importData(JSON.parse(JSON.stringify(data))), { added: 3, updated: 0, kept: 0 });
      assert.deepEqual(other.exportData('s'), data);
      // Imported again: nothing newer, all kept. A newer copy of one replaces it.
      assert.deepEqual(other.importData(data), { added: 0, updated: 0, kept: 3 });
      const newer = {
        ...data,
        turnReviews: [{ ...data.turnReviews[0]!, verdict: 'bad' as const, updatedMs: 200 }],
        pairwise: [],
        corrections: [],
      };
      assert.deepEqual(other.importData(newer), { added: 0, updated: 1, kept: 0 });
      assert.equal(other.turnReviews('s')[0]!.verdict, 'bad');
      const before = other.exportData();
      const bad = { ...data, corrections: [...data.corrections, { ...data.corrections[0]!, itemKey: 'nope' }] };
      assert.throws(
        () => other.importData(bad),
        (e: unknown) => isInvalid(e) && /corrections\[1\]/.test((e as Error).message),
      );
      assert.deepEqual(other.exportData(), before, 'nothing of the bad file was imported');
      assert.throws(() => other.importData({ hello: 1 }), isInvalid);
      assert.throws(
        () => other.importData({ ...data, version: 2 }),
        (e: unknown) => e instanceof ReviewStoreError && e.problem === 'newer-format',
      );
    } finally {
      other.close();
    }
  });

  it('refuses, with the record and the field named, an import whose turn or times are not ones a review can have', () => {
    const now = Date.UTC(2025, 5, 1);
    const day = 86_400_000;
    store.setTurnReview(ref(1), { verdict: 'good' }, {}, now - 1000);
    store.setPairwise(
      {
        sessionId: 's',
        leftBranch: 'alt',
        rightBranch: 'main',
        turn: 1,
        leftKey: K1,
        rightKey: K2,
        outcome: 'left',
        reason: '',
        leftModel: null,
        rightModel: null,
      },
      {},
      now - 1000,
    );
    store.setCorrection({ ...ref(1), itemKey: K2, text: 'better' }, {}, now - 1000);
    const data = store.exportData('s');
    const other = ReviewStore.open(join(tmp.dir, `bounds${n}.db`));
    try {
      other.setTurnReview(ref(1), { verdict: 'bad', note: 'mine' }, {}, now - 500);
      const before = other.exportData();
      const cases: [string, ReturnType<typeof store.exportData>, RegExp][] = [
        // Newer than anything: it would win every later import, and export as 1e+300.
        [
          'updatedMs 1e300',
          { ...data, turnReviews: [{ ...data.turnReviews[0]!, updatedMs: 1e300 }] },
          /^turnReviews\[0\]: updatedMs 1e\+300 is not a time/,
        ],
        [
          'updatedMs -1',
          { ...data, turnReviews: [{ ...data.turnReviews[0]!, updatedMs: -1 }] },
          /^turnReviews\[0\]: updatedMs -1 is not a time/,
        ],
        [
          'updatedMs 1.5',
          { ...data, corrections: [data.corrections[0]!, { ...data.corrections[0]!, updatedMs: 1.5 }] },
          /^corrections\[1\]: updatedMs 1\.5 is not a time/,
        ],
        [
          'updatedMs as text',
          { ...data, pairwise: [{ ...data.pairwise[0]!, updatedMs: '1748736000000' as unknown as number }] },
          /^pairwise\[0\]: updatedMs "1748736000000" is not a time/,
        ],
        [
          'createdMs missing',
          { ...data, pairwise: [{ ...data.pairwise[0]!, createdMs: undefined as unknown as number }] },
          /^pairwise\[0\]: createdMs missing is not a time/,
        ],
        [
          'createdMs 2^53',
          { ...data, corrections: [{ ...data.corrections[0]!, createdMs: 2 ** 53 }] },
          /^corrections\[0\]: createdMs 9007199254740992 is not a time/,
        ],
        // A safe integer, but more than a day after the clock: still a review from the future.
        [
          'updatedMs in year 9999',
          { ...data, turnReviews: [{ ...data.turnReviews[0]!, updatedMs: Date.UTC(9999, 11, 31) }] },
          /^turnReviews\[0\]: updatedMs 253402214400000 \(9999-12-31T00:00:00\.000Z\) is more than a day after this computer's clock \(1748736000000 \(2025-06-01/,
        ],
        [
          'updatedMs a day and a millisecond ahead',
          { ...data, pairwise: [{ ...data.pairwise[0]!, updatedMs: now + day + 1 }] },
          /^pairwise\[0\]: updatedMs \d+ \(2025-06-02T00:00:00\.001Z\) is more than a day after/,
        ],
        [
          'createdMs past the bound',
          { ...data, corrections: [{ ...data.corrections[0]!, createdMs: Number.MAX_SAFE_INTEGER }] },
          /^corrections\[0\]: createdMs 9007199254740991 is more than a day after/,
        ],
        // 2^60 is an integer, but not the one it was written as: it would show as "turn 1152921504606847000".
        [
          'turn 2^60',
          { ...data, turnReviews: [{ ...data.turnReviews[0]!, turn: 2 ** 60 }] },
          /^turnReviews\[0\]: turn 1152921504606847000 is not a turn number/,
        ],
        ['turn 0', { ...data, corrections: [{ ...data.corrections[0]!, turn: 0 }] }, /^corrections\[0\]: turn 0 is not a turn number/],
        ['turn 1.5', { ...data, pairwise: [{ ...data.pairwise[0]!, turn: 1.5 }] }, /^pairwise\[0\]: turn 1\.5 is not a turn number/],
      ];
      for (const [what, bad, message] of cases) {
        assert.throws(
          () => other.importData(JSON.parse(JSON.stringify(bad)) as unknown, now),
          (e: unknown) => isInvalid(e) && message.test((e as Error).message),
          what,
        );
        assert.deepEqual(other.exportData(), before, `${what}: nothing imported`);
      }
      // A colleague's clock up to a day ahead is still taken: the record is newer, and replaces the one here.
      const ahead = { ...data, turnReviews: [{ ...data.turnReviews[0]!, updatedMs: now + day }], pairwise: [], corrections: [] };
      assert.deepEqual(other.importData(ahead, now), { added: 0, updated: 1, kept: 0 });
      assert.equal(other.turnReviews('s')[0]!.verdict, 'good');
      assert.equal(other.exportData().turnReviews[0]!.updatedMs, now + day);
      // The last safe turn number is a turn number.
      const last = { ...data, turnReviews: [{ ...data.turnReviews[0]!, turn: Number.MAX_SAFE_INTEGER }], pairwise: [], corrections: [] };
      assert.deepEqual(other.importData(last, now), { added: 1, updated: 0, kept: 0 });
      // Written by hand too (the view, the CLI): the same rule for the turn.
      assert.throws(
        () => store.setTurnReview(ref(2 ** 60), { verdict: 'good' }),
        (e: unknown) => isInvalid(e) && /^turn 1152921504606847000 is not a turn number/.test((e as Error).message),
      );
    } finally {
      other.close();
    }
  });

  it('matches reviews to the turns as they are now: a copied session file keeps them, changed content orphans them', async () => {
    const path = join(tmp.dir, `session${n}.db`);
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    await s.addItems([{ role: 'user', content: 'What is the weather in Oslo?' }]);
    await s.addItems([{ role: 'user', content: 'And tomorrow?' }]);
    s.close();
    const keysOf = async (file: string) => {
      const db = openSessionDatabase(file);
      try {
        return await Promise.all(
          [1, 2].map(async (turn) => {
            const [user] = db.getTurnItems('s', 'main', turn);
            return { branchId: 'main', turn, turnKey: user && !user.corrupt ? turnKeyOf(user.item) : null };
          }),
        );
      } finally {
        db.close();
      }
    };
    const turns = await keysOf(path);
    store.setTurnReview({ sessionId: 's', branchId: 'main', turn: 1, turnKey: turns[0]!.turnKey! }, { verdict: 'good' });
    store.setTurnReview({ sessionId: 's', branchId: 'main', turn: 2, turnKey: turns[1]!.turnKey! }, { verdict: 'bad' });
    // A copy elsewhere has the same content: both reviews match there.
    const copy = join(tmp.dir, `copied${n}.db`);
    copyFileSync(path, copy);
    const onCopy = matchReviews(store.turnReviews('s', 'main'), await keysOf(copy));
    assert.deepEqual([...onCopy.matched.keys()], ['main 1', 'main 2']);
    assert.equal(onCopy.orphaned.length, 0);
    // Turn 2 holding another question now (the file was rewritten): its review is orphaned, not dropped or moved.
    const now = [turns[0]!, { branchId: 'main', turn: 2, turnKey: contentKey({ role: 'user', content: 'Something else' }) }];
    const changed = matchReviews(store.turnReviews('s', 'main'), now);
    assert.deepEqual([...changed.matched.keys()], ['main 1']);
    assert.deepEqual(
      changed.orphaned.map((r) => [r.turn, r.verdict]),
      [[2, 'bad']],
    );
  });

  it('two processes reviewing the same session at once lose nothing', async function () {
    this.timeout(60_000);
    const path = join(tmp.dir, `shared${n}.db`);
    ReviewStore.open(path).close();
    const script = join(tmp.dir, 'reviewer.ts');
    // A start barrier: each child opens the store, says it is ready and waits for the go file, so neither writes
    // while the other is still starting (tsx takes about a second); each reports when it asked for its first write and when its last ended,
    // about 120 ms apart, so only a child stalled that long could miss the other.
    writeFileSync(
      script,
      `import { existsSync, writeFileSync } from 'node:fs';
import { ReviewStore } from ${JSON.stringify(join(ROOT, 'src/store/reviews/reviewStore.ts'))};
const [path, who, ready, go] = process.argv.slice(2);
const store = ReviewStore.open(path, { busyTimeoutMs: 10000 });
writeFileSync(ready, '');
const sleep = new Int32Array(new SharedArrayBuffer(4));
const deadline = Date.now() + 30000;
while (!existsSync(go)) {
  if (Date.now() > deadline) throw new Error('no start signal');
  Atomics.wait(sleep, 0, 0, 1);
}
const now = () => performance.timeOrigin + performance.now();
let first = 0;
for (let t = 1; t <= 40; t++) {
  const key = ${JSON.stringify(K1)};
  // When the first write was asked for, not when it got through: a writer kept waiting by SQLite's busy handler for
  // the other's whole run still raced it.
  if (first === 0) first = now();
  // Each its own turns, and every turn a tag of its own: merged, never overwritten.
  if (t % 2 === (who === 'a' ? 1 : 0)) store.setTurnReview({ sessionId: 's', branchId: 'main', turn: t, turnKey: key }, { verdict: 'good' }, { reviewer: who });
  store.setTurnReview({ sessionId: 's', branchId: 'main', turn: t, turnKey: key }, { addTags: ['by-' + who] }, { reviewer: who });
  // A reviewer's pace: without it one child's 60 writes take ~3 ms, less than SQLite's busy handler sleeps the other.
  Atomics.wait(sleep, 0, 0, 3);
}
const last = now();
store.close();
process.stdout.write(JSON.stringify({ first, last }));
`,
    );
    const go = join(tmp.dir, `go${n}`);
    const ready = (who: string) => join(tmp.dir, `ready${n}-${who}`);
    const run = (who: string) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', script, path, who, ready(who), go], { cwd: ROOT });
    let ended = false;
    const runs = Promise.all([run('a'), run('b')]).finally(() => (ended = true));
    runs.catch(() => undefined); // awaited below; a child failing before the barrier must not be an unhandled rejection
    while (!ended && !(existsSync(ready('a')) && existsSync(ready('b')))) await new Promise((r) => setTimeout(r, 5));
    writeFileSync(go, '');
    const [a, b] = (await runs).map((r) => JSON.parse(r.stdout) as { first: number; last: number });
    // The writers overlapped: each made its first write before the other made its last, so the test saw a race.
    assert.ok(a!.first < b!.last && b!.first < a!.last, `the writes overlap: a ${JSON.stringify(a)}, b ${JSON.stringify(b)}`);
    const reviews = ReviewStore.open(path);
    try {
      const all = reviews.turnReviews('s', 'main');
      assert.equal(all.length, 40);
      assert.ok(all.every((r) => r.verdict === 'good'));
      assert.ok(
        all.every((r) => r.tags.join() === 'by-a,by-b'),
        'every turn has both reviewers tags',
      );
    } finally {
      reviews.close();
    }
  });

  it('refuses a session file and a store of a newer format, untouched', () => {
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), tmp.dir);
    const before = sha(session);
    assert.throws(
      () => ReviewStore.open(session),
      (e: unknown) => e instanceof ReviewStoreError && e.problem === 'not-review-store' && /never in a session file/.test(e.message),
    );
    assert.equal(sha(session), before);
    const newer = join(tmp.dir, `newer${n}.db`);
    ReviewStore.open(newer).close();
    const raw = ReviewStore.open(newer);
    raw.db.prepare("UPDATE review_meta SET value = '9' WHERE key = 'format'").run();
    raw.close();
    assert.throws(
      () => ReviewStore.open(newer),
      (e: unknown) => e instanceof ReviewStoreError && e.problem === 'newer-format',
    );
    const notSqlite = join(tmp.dir, `text${n}.db`);
    writeFileSync(notSqlite, 'not a database at all, just text that is long enough to have a header');
    assert.throws(
      () => ReviewStore.open(notSqlite),
      (e: unknown) => e instanceof SessionDatabaseError,
    );
  });

  it('refuses, untouched, a file with the review store header but other columns (not SQLite\'s "no such column")', () => {
    for (const [what, change] of [
      ['a column renamed', 'ALTER TABLE turn_reviews RENAME COLUMN session_id TO sid'],
      ['a table missing', 'DROP TABLE corrections'],
    ] as const) {
      const path = join(tmp.dir, `other-columns${n}-${what.length}.db`);
      const raw = ReviewStore.open(path);
      raw.db.exec(change);
      raw.close();
      const before = sha(path);
      assert.throws(
        () => ReviewStore.open(path),
        (e: unknown) =>
          e instanceof ReviewStoreError &&
          e.problem === 'not-review-store' &&
          e.message.includes(what === 'a table missing' ? 'lacks the table corrections' : 'lacks the column turn_reviews.session_id'),
        what,
      );
      assert.equal(sha(path), before, `${what}: untouched`);
    }
  });
});
