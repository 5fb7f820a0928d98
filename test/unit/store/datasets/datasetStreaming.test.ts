/**
 * Datasets streamed from review data: the branches walked forward a page at a time give, by default, exactly the
 * records and report of the whole-branch builder they replaced (`wholeBranchRecords.ts`), on our files, the demo file,
 * Python's fixtures and a plain session, with reviews over several sessions and branches in any order; `contextTurns`
 * bounds each record's context to the turns before it (and what precedes the first user message); a walk reads no
 * further than the last reviewed turn; the CLI's --context-turns.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, SQLiteSession, openDatabase, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { runCli } from '../../../../src/cli/main';
import { BranchTurns } from '../../../../src/store/datasets/branchTurns';
import { checkJsonl } from '../../../../src/store/datasets/datasetChecks';
import { exportDataset } from '../../../../src/store/datasets/datasetExport';
import { DEFAULT_REDACTIONS, datasetRecords, type DatasetOptions, type DatasetReport } from '../../../../src/store/datasets/datasetRecords';
import type { SessionReader } from '../../../../src/store/inspector/sessionReader';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import type { Correction, PairwiseReview, ReviewData, TurnReview } from '../../../../src/store/reviews/reviewTypes';
import { tempDir } from '../../../support/tempFiles';
import { PYTHON_FIXTURES, copyPythonFixture, writeExportFixture } from '../export/exportFixtures';
import { wholeBranchRecords } from './wholeBranchRecords';

type Reader = Pick<SessionReader, 'getItemsPage'>;

const user = (text: string) => ({ role: 'user', content: text });
const answer = (text: string) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });
const call = (id: string, name: string, args: object) => ({ type: 'function_call', call_id: id, name, arguments: JSON.stringify(args) });
const output = (id: string, text: string) => ({ type: 'function_call_output', call_id: id, output: text });
const reasoning = () => ({ type: 'reasoning', summary: [] });

/** A reader that answers in pages of at most `limit` items, so a walk crosses many page ends; counts the pages read. */
function smallPages(db: Reader, limit: number): Reader & { pages: number } {
  const r = {
    pages: 0,
    getItemsPage: async (s: string, b: string, req: { afterSequence?: number | null; limit: number }) => {
      r.pages++;
      return db.getItemsPage(s, b, { ...req, limit: Math.min(limit, req.limit) });
    },
  };
  return r;
}

async function collect(
  gen: (reader: Reader, reviews: ReviewData, options: DatasetOptions, report: DatasetReport) => AsyncGenerator<object>,
  reader: Reader,
  reviews: ReviewData,
  options: DatasetOptions,
): Promise<{ lines: string[]; report: DatasetReport }> {
  const report: DatasetReport = { records: 0, skipped: [], leftOut: {} };
  const lines: string[] = [];
  for await (const r of gen(reader, reviews, options, report)) lines.push(JSON.stringify(r));
  return { lines, report };
}

/** A deterministic shuffle (the reviews' order must not matter). */
function shuffled<T>(list: readonly T[], seed: number): T[] {
  const out = [...list];
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Reviews of every turn of every branch of every session in `db` (verdicts good, bad and none in turn; tags), a
 * correction of every third turn's last assistant message, pairwise verdicts between `main` and each other branch on
 * every turn both hold, and orphans: a wrong user message, a turn past the end, a corrected item that is not there.
 */
async function reviewEverything(db: SessionDatabase, seed: number): Promise<ReviewData> {
  const turnReviews: TurnReview[] = [];
  const corrections: Correction[] = [];
  const pairwise: PairwiseReview[] = [];
  const times = { createdMs: 1, updatedMs: 2 };
  let n = 0;
  for (const { sessionId } of db.listSessions()) {
    const keys = new Map<string, Map<number, string>>();
    for (const { branchId } of db.getBranchTree(sessionId)) {
      const byTurn = new Map<number, string>();
      keys.set(branchId, byTurn);
      let last = 0;
      for (const { turn } of db.getTurnsPage(sessionId, branchId, { limit: 100_000 }).turns) {
        const items = db.getTurnItems(sessionId, branchId, turn);
        const u = items.find((i) => !i.corrupt && (i.item as { role?: string }).role === 'user');
        if (!u || u.corrupt) continue;
        const turnKey = contentKey(u.item);
        byTurn.set(turn, turnKey);
        last = Math.max(last, turn);
        const ref = { sessionId, branchId, turn, turnKey };
        const verdict = (['good', 'good', 'bad', null] as const)[n % 4]!;
        turnReviews.push({ ...ref, verdict, tags: n % 3 === 0 ? ['t1'] : n % 3 === 1 ? ['t1', 't2'] : [], note: '', ...times });
        const assistant = items.filter((i) => !i.corrupt && (i.item as { role?: string }).role === 'assistant').pop();
        if (n % 3 === 0 && assistant && !assistant.corrupt)
          corrections.push({ ...ref, itemKey: contentKey(assistant.item), text: `corrected ${n}`, ...times });
        n++;
      }
      turnReviews.push({
        sessionId,
        branchId,
        turn: 1,
        turnKey: contentKey(user('not this')),
        verdict: 'good',
        tags: [],
        note: '',
        ...times,
      });
      turnReviews.push({
        sessionId,
        branchId,
        turn: last + 3,
        turnKey: contentKey(user('gone')),
        verdict: 'good',
        tags: [],
        note: '',
        ...times,
      });
      if (byTurn.has(1))
        corrections.push({
          sessionId,
          branchId,
          turn: 1,
          turnKey: byTurn.get(1)!,
          itemKey: contentKey(answer('never said')),
          text: 'x',
          ...times,
        });
    }
    const main = keys.get('main');
    for (const [branchId, byTurn] of keys) {
      if (branchId === 'main' || !main) continue;
      for (const [turn, rightKey] of byTurn) {
        const leftKey = main.get(turn);
        if (leftKey === undefined) continue;
        const outcome = (['left', 'right', 'tie', 'both-bad'] as const)[(turn + n++) % 4]!;
        pairwise.push({
          sessionId,
          leftBranch: 'main',
          rightBranch: branchId,
          turn,
          leftKey,
          rightKey,
          outcome,
          reason: '',
          leftModel: null,
          rightModel: null,
          ...times,
        });
      }
    }
  }
  return {
    format: 'agent-session-inspector/reviews',
    version: 1,
    turnReviews: shuffled(turnReviews, seed),
    corrections: shuffled(corrections, seed + 1),
    pairwise: shuffled(pairwise, seed + 2),
  };
}

describe('datasets streamed from reviews', () => {
  const tmp = tempDir('asi-dataset-stream-');
  const files: { name: string; db: SessionDatabase }[] = [];
  let ours: SessionDatabase;

  before(async () => {
    // Ours: two sessions, branches of branches, tool calls, reasoning, a system message before the first turn.
    const path = join(tmp.dir, 'ours.db');
    const trip = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
    await trip.addItems([{ role: 'system', content: 'You plan trips.' }, user('Hi'), answer('Hello!')] as never);
    await trip.addItems([
      user('Weather in Oslo?'),
      reasoning(),
      call('c1', 'get_weather', { city: 'Oslo' }),
      output('c1', 'rain'),
      answer('Rain.'),
    ] as never);
    await trip.addItems([user('Umbrella?'), answer('No need.')] as never);
    await trip.addItems([user('Hanging call'), call('c9', 'get_weather', { city: 'Rome' })] as never);
    await trip.addItems([user('Thanks'), answer('Bye.')] as never);
    await trip.createBranchFromTurn(3, 'retry');
    await trip.addItems([user('Umbrella?'), answer('Yes, take one.')] as never);
    await trip.addItems([user('And tomorrow?'), answer('Sun.')] as never);
    await trip.createBranchFromTurn(4, 'retry2');
    await trip.addItems([user('And tomorrow?'), reasoning(), answer('Clouds.')] as never);
    trip.close();
    const long = new AdvancedSQLiteSession({ sessionId: 'long', dbPath: path });
    await long.addItems([{ role: 'developer', content: 'Count.' }] as never);
    for (let i = 1; i <= 40; i++)
      await long.addItems(
        (i % 5 === 0
          ? [user(`q${i}`), call(`k${i}`, 'add', { i }), output(`k${i}`, String(i)), answer(`a${i}`)]
          : [user(`q${i}`), answer(`a${i}`)]) as never,
      );
    long.close();
    // The same file as another writer might leave it: rows without a turn inside turns, and a branch none of whose
    // rows has one (its turns are then counted from its user messages, as for a plain session).
    const nullsPath = join(tmp.dir, 'nulls.db');
    const raw = openDatabase(path);
    raw.exec(`VACUUM INTO '${nullsPath}'`);
    raw.close();
    const nulls = openDatabase(nullsPath);
    nulls.exec(`UPDATE message_structure SET user_turn_number = NULL WHERE session_id = 'trip' AND message_type <> 'user' AND id % 2 = 0;
      UPDATE message_structure SET user_turn_number = NULL WHERE session_id = 'long'`);
    nulls.close();
    ours = openSessionDatabase(path);
    files.push({ name: 'ours', db: ours }, { name: 'nulls', db: openSessionDatabase(nullsPath) });
    const demo = join(tmp.dir, 'demo.db');
    await writeExportFixture(demo);
    files.push({ name: 'demo', db: openSessionDatabase(demo) });
    for (const fixture of PYTHON_FIXTURES)
      files.push({ name: fixture.split(/[\\/]/).pop()!, db: openSessionDatabase(copyPythonFixture(fixture, tmp.dir)) });
    // A plain session: no structure rows, turns counted from user messages; an item before the first one.
    const plainPath = join(tmp.dir, 'plain.db');
    const plain = new SQLiteSession({ sessionId: 'p', dbPath: plainPath });
    await plain.addItems([
      { role: 'system', content: 'Plain.' },
      user('one'),
      answer('1'),
      user('two'),
      call('c', 'f', {}),
      output('c', 'o'),
      answer('2'),
    ] as never);
    await plain.addItems([user('three'), answer('3')] as never);
    plain.close();
    files.push({ name: 'plain', db: openSessionDatabase(plainPath) });
  });
  after(() => {
    for (const f of files) f.db.close();
    tmp.cleanup();
  });

  const VARIANTS: DatasetOptions[] = (['sft', 'preference', 'eval'] as const).flatMap((format) => [
    { format },
    { format, redact: [...DEFAULT_REDACTIONS], tools: [{ type: 'function', function: { name: 'get_weather' } }] },
    { format, branchId: 'main' },
    { format, tags: ['t2'] },
    { format, verdict: 'bad' as const },
    { format, verdict: 'good' as const },
  ]);

  it('gives the whole-branch builder’s records and report, byte for byte, on every file, in pages of any size', async () => {
    let compared = 0;
    for (const [f, { name, db }] of files.entries()) {
      const reviews = await reviewEverything(db, 7 + f);
      if (name === 'nulls')
        for (let turn = 1; turn <= 40; turn++) {
          const ref = { sessionId: 'long', branchId: 'main', turn, turnKey: contentKey(user(`q${turn}`)) };
          reviews.turnReviews.push({ ...ref, verdict: turn % 3 ? 'good' : 'bad', tags: ['t2'], note: '', createdMs: 1, updatedMs: 2 });
        }
      assert.ok(reviews.turnReviews.length > 2, `${name} has reviews`);
      for (const options of VARIANTS) {
        const expected = await collect(wholeBranchRecords, db, reviews, options);
        for (const reader of Object.keys(options).length === 1 ? [db, smallPages(db, 3), smallPages(db, 1)] : [db, smallPages(db, 3)]) {
          const got = await collect(datasetRecords, reader, reviews, options);
          const what = `${name} ${JSON.stringify({ ...options, redact: undefined })}`;
          assert.deepEqual(got.lines, expected.lines, what);
          assert.deepEqual(got.report, expected.report, what);
          compared += got.lines.length;
        }
      }
      // One session of many: the filter picks it, the others' reviews are left alone.
      const sessionId = db.listSessions()[0]!.sessionId;
      const one = { format: 'eval' as const, sessionId };
      assert.deepEqual(await collect(datasetRecords, db, reviews, one), await collect(wholeBranchRecords, db, reviews, one));
    }
    assert.ok(compared > 300, `records compared: ${compared}`);
  });

  it('records of reviews across sessions and branches come grouped by session, branch and turn, whatever the store’s order', async () => {
    const reviews = await reviewEverything(ours, 3);
    const { lines } = await collect(datasetRecords, ours, reviews, { format: 'eval' });
    const good = lines.map((l) => JSON.parse(l) as { kind: string; source: { sessionId: string; branchId: string; turn: number } });
    const turns = good.filter((r) => r.kind === 'good-turn').map((r) => r.source);
    assert.deepEqual(
      turns.map((s) => `${s.sessionId} ${s.branchId}`).filter((k, i, all) => all.indexOf(k) === i),
      ['long main', 'trip main', 'trip retry', 'trip retry2'],
    );
    for (let i = 1; i < turns.length; i++)
      if (turns[i]!.sessionId === turns[i - 1]!.sessionId && turns[i]!.branchId === turns[i - 1]!.branchId)
        assert.ok(turns[i]!.turn > turns[i - 1]!.turn, 'in turn order');
  });

  it('contextTurns: only the turns before the record’s turn, and what precedes the first user message', async () => {
    const store = ReviewStore.open(join(tmp.dir, 'ctx.db'));
    try {
      const K = (t: string) => contentKey(user(t));
      store.setTurnReview({ sessionId: 'long', branchId: 'main', turn: 10, turnKey: K('q10') }, { verdict: 'good' });
      store.setTurnReview({ sessionId: 'long', branchId: 'main', turn: 12, turnKey: K('q12') }, { verdict: 'good', tags: ['x'] });
      store.setTurnReview({ sessionId: 'trip', branchId: 'retry', turn: 3, turnKey: K('Umbrella?') }, { verdict: 'good' });
      const data = store.exportData();
      const sft = async (contextTurns?: number) =>
        (await collect(datasetRecords, ours, data, { format: 'sft', contextTurns })).lines.map(
          (l) => (JSON.parse(l) as { messages: { role: string; content: string | null }[] }).messages,
        );
      const text = (messages: { role: string; content: string | null }[]) => messages.map((m) => `${m.role}:${m.content ?? 'calls'}`);
      const [turn10, turn12, retry3] = await sft(2);
      assert.deepEqual(text(turn10!), [
        'system:Count.',
        'user:q8',
        'assistant:a8',
        'user:q9',
        'assistant:a9',
        'user:q10',
        'assistant:calls',
        'tool:10',
        'assistant:a10',
      ]);
      assert.deepEqual(text(turn12!), [
        'system:Count.',
        'user:q10',
        'assistant:calls',
        'tool:10',
        'assistant:a10',
        'user:q11',
        'assistant:a11',
        'user:q12',
        'assistant:a12',
      ]);
      assert.deepEqual(text(retry3!), [
        'system:You plan trips.',
        'user:Hi',
        'assistant:Hello!',
        'user:Weather in Oslo?',
        'assistant:calls',
        'tool:rain',
        'assistant:Rain.',
        'user:Umbrella?',
        'assistant:Yes, take one.',
      ]);
      assert.deepEqual((await sft(0)).map(text), [
        ['system:Count.', 'user:q10', 'assistant:calls', 'tool:10', 'assistant:a10'],
        ['system:Count.', 'user:q12', 'assistant:a12'],
        ['system:You plan trips.', 'user:Umbrella?', 'assistant:Yes, take one.'],
      ]);
      // A bound past the branch's turns is no bound: the default's records.
      assert.deepEqual(await sft(1000), await sft(undefined));
      assert.equal((await sft(undefined))[1]!.length, 1 + 12 * 2 + 2 * 2, 'the system message, 12 turns, 2 of them with a call');
      // Every format takes it, and what it writes passes the checker.
      for (const format of ['sft', 'eval'] as const) {
        const out = join(tmp.dir, `ctx-${format}.jsonl`);
        const report = await exportDataset(ours, data, out, { format, contextTurns: 1 });
        assert.equal(report.records, 3);
        assert.deepEqual(checkJsonl(format, readFileSync(out, 'utf8')).problems, []);
      }
      const evalRecord = (await collect(datasetRecords, ours, data, { format: 'eval', contextTurns: 1 })).lines[1]!;
      assert.deepEqual(
        (JSON.parse(evalRecord) as { input: { content: string }[] }).input.map((m) => m.content),
        ['Count.', 'q11', 'a11', 'q12'],
      );
      await assert.rejects(collect(datasetRecords, ours, data, { format: 'sft', contextTurns: -1 }), TypeError);
      await assert.rejects(collect(datasetRecords, ours, data, { format: 'sft', contextTurns: 1.5 }), TypeError);
    } finally {
      store.close();
    }
  });

  it('a plain session’s turns are counted from its user messages, with a bounded context too', async () => {
    const db = files.find((f) => f.name === 'plain')!.db;
    const walk = new BranchTurns(db, 'p', db.getBranchTree('p')[0]!.branchId, 1);
    const three = await walk.turn(3);
    assert.deepEqual(three?.user, user('three'));
    assert.deepEqual(
      three?.context.map((i) => (i as { role?: string; type?: string }).role ?? (i as { type?: string }).type),
      ['system', 'user', 'function_call', 'function_call_output', 'assistant'],
    );
    assert.equal(await walk.turn(4), null, 'no turn 4');
    // Asked again for an earlier turn: the walk starts over.
    assert.deepEqual((await walk.turn(1))?.user, user('one'));
  });

  it('reads no further than the last reviewed turn', async () => {
    const store = ReviewStore.open(join(tmp.dir, 'early.db'));
    try {
      store.setTurnReview({ sessionId: 'long', branchId: 'main', turn: 2, turnKey: contentKey(user('q2')) }, { verdict: 'good' });
      const reader = smallPages(ours, 4);
      const { lines } = await collect(datasetRecords, reader, store.exportData(), { format: 'sft' });
      assert.equal(lines.length, 1);
      // Turn 2 ends at item 5 (developer, q1, a1, q2, a2); the page that shows turn 3 begins ends the walk.
      assert.equal(reader.pages, 2, 'two pages of 4 of a branch of 97 items');
    } finally {
      store.close();
    }
  });

  it('agent-sessions dataset --context-turns N', async () => {
    const storePath = join(tmp.dir, 'cli-reviews.db');
    const store = ReviewStore.open(storePath);
    store.setTurnReview({ sessionId: 'long', branchId: 'main', turn: 20, turnKey: contentKey(user('q20')) }, { verdict: 'good' });
    store.close();
    const out = join(tmp.dir, 'cli-sft.jsonl');
    const write = process.stdout.write;
    let printed = '';
    process.stdout.write = ((chunk: string) => ((printed += chunk), true)) as typeof process.stdout.write;
    let code: number;
    try {
      code = await runCli(['dataset', 'sft', ours.path, '--store', storePath, '-o', out, '--context-turns', '1', '--no-color']);
    } finally {
      process.stdout.write = write;
    }
    assert.equal(code, 0, printed);
    const messages = (JSON.parse(readFileSync(out, 'utf8')) as { messages: { content: string | null }[] }).messages;
    assert.deepEqual(
      messages.map((m) => m.content),
      ['Count.', 'q19', 'a19', 'q20', null, '20', 'a20'],
    );
  });
});
