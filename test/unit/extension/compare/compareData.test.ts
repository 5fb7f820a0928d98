/** The compare view's models, read from real files written through the store and by the Python SDK. */
import { strict as assert } from 'node:assert';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { CompareData, type ColumnSource } from '../../../../src/extension/compare/compareData';
import type { CompareRowView, CompareTarget } from '../../../../src/shared/protocol/compareViews';
import { BUILT_IN_PRICES, costOf, priceOf } from '../../../../src/shared/pricing';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { copyFixture, tempDir } from '../../../support/tempFiles';
import { replayCounts } from '../../../../src/extension/replay/replayRecords';
import { ReplayMarkStore } from '../../../../src/store/replay/replayMarkStore';

const usage = (input: number, output: number, cached = 0) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output,
      inputTokensDetails: [{ cached_tokens: cached }],
      outputTokensDetails: [{ reasoning_tokens: 0 }],
    },
  },
});

const assistant = (text: string) => ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] });
const call = (callId: string, name: string, args: unknown) => ({
  type: 'function_call',
  call_id: callId,
  name,
  arguments: JSON.stringify(args),
});
const output = (callId: string, text: string) => ({ type: 'function_call_output', call_id: callId, output: text });

/** One turn: the user's question, optionally a tool call, the answer; usage stored with `input` tokens. */
async function turn(
  s: AdvancedSQLiteSession,
  question: string,
  answer: string,
  input: number,
  tool?: { name: string; args: unknown; out: string },
) {
  const items: unknown[] = [{ role: 'user', content: question }];
  if (tool) items.push(call(`c_${question.length}_${input}`, tool.name, tool.args), output(`c_${question.length}_${input}`, tool.out));
  items.push(assistant(answer));
  await s.addItems(items as never);
  await s.storeRunUsage(usage(input, 10));
}

describe('compare data', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  const open: SessionDatabase[] = [];
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    tmp.cleanup();
  });

  function source(): (t: CompareTarget) => ColumnSource {
    const dbs = new Map<string, SessionDatabase>();
    return (t) => {
      let db = dbs.get(t.dbPath);
      if (!db) {
        db = openSessionDatabase(t.dbPath);
        open.push(db);
        dbs.set(t.dbPath, db);
      }
      return { reader: db, dbName: t.dbPath, pricing: { model: 'gpt-4o', price: priceOf(BUILT_IN_PRICES, 'gpt-4o') } };
    };
  }

  /** main: 4 turns; retry: from turn 3 (shares 1–2), 3 turns; nested: from retry at turn 3+1 … */
  async function branchedFile(): Promise<string> {
    const path = join(tmp.dir, 'b.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    try {
      await turn(s, 'Hello', 'Hi there.', 100);
      await turn(s, 'Weather in Paris?', 'It is sunny in Paris today.', 200, {
        name: 'get_weather',
        args: { city: 'Paris', days: [1, 2] },
        out: 'Sunny',
      });
      await turn(s, 'And tomorrow?', 'Tomorrow is rainy.', 300);
      await turn(s, 'Thanks', 'You are welcome.', 400);
      await s.createBranchFromTurn(3, 'retry');
      await turn(s, 'And tomorrow?', 'Tomorrow will be cloudy in Paris.', 310, {
        name: 'get_weather',
        args: { city: 'Paris', days: [2] },
        out: 'Cloudy',
      });
      await turn(s, 'Thanks', 'You are welcome.', 410);
      await turn(s, 'Bye', 'Goodbye!', 510);
      // A fork of the fork: shares turns 1–2 (main's) and 3 (retry's).
      await s.createBranchFromTurn(4, 'nested');
      await turn(s, 'Thanks a lot', 'Any time.', 420);
    } finally {
      s.close();
    }
    return path;
  }

  const side = (row: CompareRowView, i: number) => {
    const s = row.sides[i];
    assert.ok(s, `row ${row.turn} has column ${i}`);
    return s;
  };
  const text = (pieces: { text: string }[]) => pieces.map((p) => p.text).join('');

  it('aligns two branches of one session from their fork, with word and argument diffs and usage', async () => {
    const path = await branchedFile();
    const data = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'main' },
        { dbPath: path, sessionId: 's', branchId: 'retry' },
      ],
      source(),
    );
    const view = await data.view();
    assert.equal(view.sharedBy, 'fork');
    assert.equal(view.sharedTurns, 2);
    // main has turns 3–4 after the fork, retry 3–5: the longer decides.
    assert.equal(view.rowCount, 3);
    assert.deepEqual(
      view.columns.map((c) => [c.branchId, c.turns]),
      [
        ['main', 4],
        ['retry', 5],
      ],
    );
    // Totals of each branch's whole conversation: retry's turns 1–2 ran on main (100 + 200), then 310 + 410 + 510.
    const summary = await data.summary();
    assert.deepEqual(
      summary.columns.map((c) => c?.usage.inputTokens),
      [1000, 1530],
    );
    assert.deepEqual(summary.columns[1]!.tools, [{ name: 'get_weather', calls: 2 }]);
    assert.ok(summary.columns[0]!.cost !== null && summary.columns[0]!.cost > 0);

    const { rows } = await data.rows(0, 50);
    assert.deepEqual(
      rows.map((r) => [r.turn, r.differs]),
      [
        [3, true],
        [4, false],
        [5, true],
      ],
    );
    const [r3, r4, r5] = rows as [CompareRowView, CompareRowView, CompareRowView];
    // Word diff: the baseline marks what it lost, the other what it gained; each reads as its own text.
    assert.equal(text(side(r3, 0).assistant), 'Tomorrow is rainy.');
    assert.equal(text(side(r3, 1).assistant), 'Tomorrow will be cloudy in Paris.');
    assert.ok(side(r3, 0).assistant.some((p) => p.change === 'removed' && p.text.includes('rainy')));
    assert.ok(side(r3, 1).assistant.some((p) => p.change === 'added' && p.text.includes('cloudy')));
    assert.ok(side(r3, 1).assistant.some((p) => p.change === 'same' && p.text.includes('Tomorrow')));
    // The retry called a tool the original did not.
    assert.deepEqual(
      side(r3, 1).tools.map((t) => [t.name, t.status, t.output]),
      [['get_weather', 'added', 'Cloudy']],
    );
    assert.equal(side(r3, 0).usage?.inputTokens, 300);
    assert.equal(side(r3, 1).usage?.inputTokens, 310);
    assert.ok(side(r3, 1).cost! > side(r3, 0).cost!);
    // Turn 4 says the same on both; its usage is each branch's own.
    assert.equal(side(r4, 1).differs, false);
    assert.equal(side(r4, 1).usage?.inputTokens, 410);
    // Turn 5 exists only on the retry.
    assert.equal(r5.sides[0], null);
    assert.equal(text(side(r5, 1).user), 'Bye');

    // Paging: a window in the middle gives the same rows.
    const page = await data.rows(1, 1);
    assert.deepEqual(
      page.rows.map((r) => r.turn),
      [4],
    );
    assert.deepEqual((await data.rows(3, 10)).rows, []);
  });

  it("shows a copied turn's usage from the branch's own row when it has one, as the card counts it", async () => {
    const path = join(tmp.dir, 'own.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    try {
      await turn(s, 'q1', 'a1', 100);
      await turn(s, 'q2', 'a2', 200);
      await turn(s, 'q3', 'a3', 300);
      await s.createBranchFromTurn(3, 'r1');
      // A run on r1 before its first own turn stores a row for copied turn 2.
      await s.storeRunUsage(usage(7777, 10));
      await turn(s, 'q3', 'a3 r1', 333);
      await s.switchToBranch('main');
      await s.createBranchFromTurn(1, 'x');
      await turn(s, 'q1', 'a1 x', 11);
    } finally {
      s.close();
    }
    const data = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'x' },
        { dbPath: path, sessionId: 's', branchId: 'r1' },
      ],
      source(),
    );
    await data.view();
    const { rows } = await data.rows(0, 50);
    assert.deepEqual(
      rows.map((r) => r.sides[1]?.usage?.inputTokens ?? null),
      [100, 7777, 333],
    );
    const card = (await data.summary()).columns[1];
    assert.equal(card?.usage.inputTokens, 100 + 7777 + 333);
  });

  it('diffs the arguments of matching tool calls structurally', async () => {
    const path = await branchedFile();
    const data = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'main' },
        { dbPath: path, sessionId: 's', branchId: 'retry' },
      ],
      source(),
    );
    // Compare retry's turn 3 with… a different layout: main vs nested share 1–2; nested's turn 3 is retry's.
    const nested = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'retry' },
        { dbPath: path, sessionId: 's', branchId: 'nested' },
      ],
      source(),
    );
    const v = await nested.view();
    assert.equal(v.sharedTurns, 3, 'nested shares retry’s turn 3 (and main’s 1–2)');
    const rows = (await nested.rows(0, 10)).rows;
    assert.deepEqual(
      rows.map((r) => r.turn),
      [4, 5],
    );
    assert.equal(text(side(rows[0]!, 1).user), 'Thanks a lot');
    assert.equal(rows[1]!.sides[1], null);
    // Turn 2 of main against turn 2 via a one-turn-earlier fork is not needed here; check argument diffs directly on
    // a comparison where both sides call get_weather: main turn 2 vs retry turn 3 are different turns, so build one.
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path });
    try {
      await s.switchToBranch('main');
      await s.createBranchFromTurn(2, 'lyon');
      await turn(s, 'Weather in Lyon?', 'It is sunny in Lyon today.', 220, {
        name: 'get_weather',
        args: { city: 'Lyon', days: [1, 2, 3] },
        out: 'Sunny',
      });
    } finally {
      s.close();
    }
    const lyon = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'main' },
        { dbPath: path, sessionId: 's', branchId: 'lyon' },
      ],
      source(),
    );
    assert.equal((await lyon.view()).sharedTurns, 1);
    const [row] = (await lyon.rows(0, 1)).rows;
    const tool = side(row!, 1).tools[0]!;
    assert.equal(tool.status, 'changed');
    assert.deepEqual(tool.argumentChanges, [
      { path: 'city', kind: 'changed', before: '"Paris"', after: '"Lyon"' },
      { path: 'days[2]', kind: 'added', after: '3' },
    ]);
    assert.equal(tool.outputChanged, false);
    assert.equal(side(row!, 0).tools[0]!.status, 'changed');
    void data;
  });

  it('compares branches of different files by content: the copied first turns are shared', async () => {
    const path = await branchedFile();
    const copy = join(tmp.dir, 'copy.db');
    copyFileSync(path, copy);
    // The copy continues main differently from turn 4.
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: copy });
    try {
      await s.switchToBranch('main');
      await s.createBranchFromTurn(4, 'other');
      await turn(s, 'Thanks!!', 'Sure.', 50);
    } finally {
      s.close();
    }
    const data = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'main' },
        { dbPath: copy, sessionId: 's', branchId: 'other' },
      ],
      source(),
    );
    const view = await data.view();
    assert.equal(view.sharedBy, 'content');
    assert.equal(view.sharedTurns, 3);
    assert.equal(view.rowCount, 1);
    const [row] = (await data.rows(0, 5)).rows;
    assert.equal(row!.turn, 4);
    assert.equal(text(side(row!, 1).user), 'Thanks!!');
    assert.equal(side(row!, 1).usage?.inputTokens, 50);
  });

  it('does not share turns of two files that differ only in a system prompt or reasoning', async () => {
    const write = async (name: string, system: string, thought: string) => {
      const path = join(tmp.dir, name);
      const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
      try {
        await turn(s, 'Hello', 'Hi there.', 100);
        await s.addItems([
          { role: 'user', content: 'Weather?' },
          { role: 'system', content: system },
          { type: 'reasoning', id: `rs_${name}`, summary: [{ type: 'summary_text', text: thought }] },
          assistant('Sunny.'),
        ] as never);
      } finally {
        s.close();
      }
      return path;
    };
    const compare = async (a: string, b: string) =>
      (
        await new CompareData(
          [
            { dbPath: a, sessionId: 's', branchId: 'main' },
            { dbPath: b, sessionId: 's', branchId: 'main' },
          ],
          source(),
        ).view()
      ).sharedTurns;
    const base = await write('a.db', 'Be brief.', 'Look it up.');
    // Equal content with other item ids is a copy; another system prompt or other reasoning is not.
    assert.equal(await compare(base, await write('same.db', 'Be brief.', 'Look it up.')), 2);
    assert.equal(await compare(base, await write('system.db', 'Be verbose.', 'Look it up.')), 1);
    assert.equal(await compare(base, await write('reasoning.db', 'Be brief.', 'Guess.')), 1);
  });

  it('compares the Python SDK’s branches (ref-multisession.db) and reports a missing branch per column', async () => {
    const path = copyFixture('test/fixtures/conformance/ref-multisession.db', tmp.dir);
    const data = new CompareData(
      [
        { dbPath: path, sessionId: 'alice', branchId: 'main' },
        { dbPath: path, sessionId: 'alice', branchId: 'alt' },
        { dbPath: path, sessionId: 'alice', branchId: 'gone' },
      ],
      source(),
    );
    const view = await data.view();
    assert.match(view.columns[2]!.problem ?? '', /gone/);
    assert.equal((await data.summary()).columns[2], null);
    // A column that cannot be read shares nothing: the rows start at turn 1.
    assert.equal(view.sharedTurns, 0);
    const two = new CompareData(
      [
        { dbPath: path, sessionId: 'alice', branchId: 'main' },
        { dbPath: path, sessionId: 'alice', branchId: 'alt' },
      ],
      source(),
    );
    const v = await two.view();
    assert.equal(v.sharedTurns, 1);
    assert.equal(v.rowCount, 1);
    const [row] = (await two.rows(0, 5)).rows;
    assert.equal(row!.turn, 2);
    assert.equal(side(row!, 0).usage?.totalTokens, 59);
    assert.equal(side(row!, 1).usage?.totalTokens, 55);
    assert.ok(row!.differs);
  });

  it('a grid of several columns diffs each against the baseline, which reads plain', async () => {
    const path = await branchedFile();
    const data = new CompareData(
      ['main', 'retry', 'nested'].map((branchId) => ({
        dbPath: path,
        sessionId: 's',
        branchId,
        label: branchId.toUpperCase(),
        runMs: 1234,
      })),
      source(),
    );
    const view = await data.view();
    assert.equal(view.sharedTurns, 2);
    assert.deepEqual(
      view.columns.map((c) => [c.label, c.runMs]),
      [
        ['MAIN', 1234],
        ['RETRY', 1234],
        ['NESTED', 1234],
      ],
    );
    const [r3] = (await data.rows(0, 1)).rows;
    assert.ok(side(r3!, 0).assistant.every((p) => p.change === 'same'));
    assert.ok(side(r3!, 1).differs && side(r3!, 2).differs);
    // nested's turn 3 ran on retry: its usage is retry's row.
    assert.equal(side(r3!, 2).usage?.inputTokens, 310);
  });

  it("counts each column's replayed, live and unmatched calls from the replay marks store, with the divergence", async () => {
    const path = await branchedFile();
    const marks = ReplayMarkStore.open(join(tmp.dir, 'replay.db'));
    try {
      const divergence = { step: 1, recorded: null, actual: { name: 'get_weather', arguments: '{"city":"Paris"}' }, diff: [] };
      marks.recordRun(
        path,
        's',
        'retry',
        3,
        {
          mode: 'replay',
          source: { branchId: 'main', turn: 3 },
          recordedCalls: 0,
          marks: [
            { callId: 'c_13_310', name: 'get_weather', arguments: '{"city":"Paris","days":[2]}', outcome: 'live', recordedCallId: null },
          ],
          hosted: [],
          divergence,
          disagreements: [],
        },
        'run-1',
      );
      const data = new CompareData(
        [
          { dbPath: path, sessionId: 's', branchId: 'main' },
          { dbPath: path, sessionId: 's', branchId: 'retry' },
        ],
        source(),
        undefined,
        { counts: async (dbPath, sessionId, branchId) => replayCounts(marks.runsOfBranch(dbPath, sessionId, branchId)) },
      );
      const { columns } = await data.summary();
      // main was never re-run: no counts; retry's run ran its one call live and left the (empty) recording at step 1.
      assert.equal(columns[0]?.replay, undefined);
      assert.deepEqual(columns[1]?.replay, { replayed: 0, live: 1, unmatched: 0, divergence });
      // A store that cannot be read leaves the counts out and the summary whole.
      const broken = new CompareData(
        [
          { dbPath: path, sessionId: 's', branchId: 'retry' },
          { dbPath: path, sessionId: 's', branchId: 'main' },
        ],
        source(),
        undefined,
        {
          counts: () => Promise.reject(new Error('locked')),
        },
      );
      const summary = await broken.summary();
      assert.equal(summary.columns[0]?.replay, undefined);
      assert.equal(summary.columns[0]?.usage.inputTokens, 1530);
    } finally {
      marks.close();
    }
  });
  it("prices a retry's shared turns at the model that ran them, the card as the sum of its turns", async () => {
    const path = await branchedFile();
    const session = { model: 'gpt-4o', price: priceOf(BUILT_IN_PRICES, 'gpt-4o') };
    const at = (model: string) => ({ model, price: priceOf(BUILT_IN_PRICES, model), session });
    const db = openSessionDatabase(path);
    open.push(db);
    // As the panel builds them: a retry's column at its model, with the session's pricing for what it shares.
    const models: Record<string, string> = { retry: 'gpt-5-nano', nested: 'gpt-4.1-mini' };
    const sourceOf = (t: CompareTarget): ColumnSource => ({
      reader: db,
      dbName: 'b.db',
      pricing: models[t.branchId] ? at(models[t.branchId]!) : session,
    });
    // Every turn stored 10 output tokens, no cached ones.
    const cost = (input: number, model: string) =>
      costOf({ inputTokens: input, outputTokens: 10, cachedTokens: 0, reasoningTokens: 0 }, priceOf(BUILT_IN_PRICES, model))!;
    const near = (actual: number | null | undefined, expected: number, what: string) =>
      assert.ok(actual != null && Math.abs(actual - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);

    const data = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'main' },
        { dbPath: path, sessionId: 's', branchId: 'retry', model: 'gpt-5-nano' },
        { dbPath: path, sessionId: 's', branchId: 'nested', model: 'gpt-4.1-mini' },
      ],
      sourceOf,
    );
    const [mainCard, retryCard, nestedCard] = (await data.summary()).columns;
    near(mainCard?.cost, cost(100, 'gpt-4o') + cost(200, 'gpt-4o') + cost(300, 'gpt-4o') + cost(400, 'gpt-4o'), 'main');
    // Turns 1–2 ran on main (the session's model), 3–5 on the retry's.
    const retryShared = cost(100, 'gpt-4o') + cost(200, 'gpt-4o');
    near(retryCard?.cost, retryShared + cost(310, 'gpt-5-nano') + cost(410, 'gpt-5-nano') + cost(510, 'gpt-5-nano'), 'retry');
    // The nested retry's turn 3 ran on the retry (a column: its model), turn 4 is its own.
    near(nestedCard?.cost, retryShared + cost(310, 'gpt-5-nano') + cost(420, 'gpt-4.1-mini'), 'nested');
    assert.equal(retryCard?.usage.inputTokens, 1530);

    // The grid prices each turn as the card does: nested's turn 3 (shown from turn 3 on) at the retry's model.
    const { rows } = await data.rows(0, 50);
    const r3 = rows.find((r) => r.turn === 3)!;
    near(side(r3, 1).cost, cost(310, 'gpt-5-nano'), 'retry turn 3');
    near(side(r3, 2).cost, cost(310, 'gpt-5-nano'), 'nested turn 3');
    near(
      side(
        rows.find((r) => r.turn === 4)!,
        2,
      ).cost,
      cost(420, 'gpt-4.1-mini'),
      'nested turn 4',
    );

    // Without the retry's column, the nested retry's shared turns ran on branches no column shows: the session's model.
    const pair = new CompareData(
      [
        { dbPath: path, sessionId: 's', branchId: 'main' },
        { dbPath: path, sessionId: 's', branchId: 'nested', model: 'gpt-4.1-mini' },
      ],
      sourceOf,
    );
    near((await pair.summary()).columns[1]?.cost, retryShared + cost(310, 'gpt-4o') + cost(420, 'gpt-4.1-mini'), 'nested alone');
  });
});
