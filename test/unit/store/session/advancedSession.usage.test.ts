/**
 * Usage tracking (spec §9, §10.2, §12 c): storeRunUsage's row, replace semantics, detail texts, the no-user-turn
 * case, never throwing; getSessionUsage and getTurnUsage in all their forms.
 */
import { strict as assert } from 'node:assert';
import { Usage } from '@openai/agents';
import { openSessionDatabase, type AdvancedSQLiteSession } from '../../../../src/store';
import { Workspace, captureLogger, execSql, mk, query, sameJson } from '../../../support/sessionHelpers';

type UsageRow = {
  id: number;
  session_id: string;
  branch_id: string;
  user_turn_number: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details: string | null;
  output_tokens_details: string | null;
};

describe('AdvancedSQLiteSession usage', () => {
  let ws: Workspace;
  let logger: ReturnType<typeof captureLogger>;
  beforeEach(() => {
    ws = new Workspace();
    logger = captureLogger();
  });
  afterEach(() => ws.cleanup());

  const usageRows = () =>
    query<UsageRow>(
      ws.path(),
      'SELECT id, session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details FROM turn_usage ORDER BY id',
    );
  async function twoTurns(): Promise<AdvancedSQLiteSession> {
    const s = ws.open({ logger });
    await s.addItems([mk.user('q1'), mk.assistant('a1')]);
    await s.addItems([mk.user('q2'), mk.call('tool'), mk.output()]);
    return s;
  }

  describe('storeRunUsage (§9)', () => {
    it('writes the latest turn of the current branch with both detail texts in the fixed key order', async () => {
      const s = await twoTurns();
      const usage = new Usage({
        requests: 2,
        input_tokens: 100,
        output_tokens: 40,
        total_tokens: 140,
        input_tokens_details: [
          { cached_tokens: 10, cache_write_tokens: 1 },
          { cached_tokens: 22, other: 99 },
        ],
        output_tokens_details: [{ reasoning_tokens: 5 }, { reasoning_tokens: 7 }],
      } as ConstructorParameters<typeof Usage>[0]);
      await s.storeRunUsage({ state: { usage } });
      assert.deepEqual(usageRows(), [
        {
          id: 1,
          session_id: 's1',
          branch_id: 'main',
          user_turn_number: 2,
          requests: 2,
          input_tokens: 100,
          output_tokens: 40,
          total_tokens: 140,
          input_tokens_details: '{"cache_write_tokens": 1, "cached_tokens": 32}',
          output_tokens_details: '{"reasoning_tokens": 12}',
        },
      ]);
      assert.deepEqual(logger.errors, []);
      assert.deepEqual(logger.warnings, []);
    });

    it('always writes both detail texts, zeros included', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 3, outputTokens: 4, totalTokens: 7 } } });
      const [row] = usageRows();
      assert.equal(row?.input_tokens_details, '{"cache_write_tokens": 0, "cached_tokens": 0}');
      assert.equal(row?.output_tokens_details, '{"reasoning_tokens": 0}');
    });

    it('sums a single detail object as one record; ignores non-numeric values, other keys and requestUsageEntries', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({
        state: {
          usage: {
            requests: 1,
            inputTokens: 3,
            outputTokens: 4,
            totalTokens: 7,
            inputTokensDetails: { cached_tokens: 5, cache_write_tokens: '9', cachedTokens: 100 },
            outputTokensDetails: [{ reasoning_tokens: 2 }, { reasoning_tokens: null }, { reasoning_tokens: 3, x: 1 }],
            requestUsageEntries: [{ inputTokens: 1000 }],
          } as never,
        },
      });
      const [row] = usageRows();
      assert.equal(row?.input_tokens_details, '{"cache_write_tokens": 0, "cached_tokens": 5}');
      assert.equal(row?.output_tokens_details, '{"reasoning_tokens": 5}');
      assert.deepEqual([row?.requests, row?.input_tokens, row?.output_tokens, row?.total_tokens], [1, 3, 4, 7]);
    });

    it('writes 0 for missing, null, 0 or non-finite scalars', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: null, inputTokens: NaN, outputTokens: Infinity } } });
      const [row] = usageRows();
      assert.deepEqual([row?.requests, row?.input_tokens, row?.output_tokens, row?.total_tokens], [0, 0, 0, 0]);
    });

    it('replaces the row of the same turn: new id, values replaced, not summed', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 } } });
      await s.storeRunUsage({ state: { usage: { requests: 3, inputTokens: 7, outputTokens: 2, totalTokens: 9 } } });
      const rows = usageRows();
      assert.equal(rows.length, 1);
      assert.deepEqual(
        rows.map((r) => [r.id, r.user_turn_number, r.requests, r.input_tokens, r.output_tokens, r.total_tokens]),
        [[2, 2, 3, 7, 2, 9]],
      );
      assert.deepEqual(query(ws.path(), "SELECT seq FROM sqlite_sequence WHERE name = 'turn_usage'"), [{ seq: 2 }]);
    });

    it('goes to the latest turn at call time, per branch', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      await s.addItems([mk.user('q3')]);
      await s.storeRunUsage({ state: { usage: { requests: 2 } } });
      await s.createBranchFromTurn(2, 'alt');
      await s.addItems([mk.user('alt q2')]);
      await s.storeRunUsage({ state: { usage: { requests: 5 } } });
      assert.deepEqual(
        usageRows().map((r) => [r.branch_id, r.user_turn_number, r.requests]),
        [
          ['main', 2, 1],
          ['main', 3, 2],
          ['alt', 2, 5],
        ],
      );
    });

    it('with a turn (ours): writes that turn, not the latest, only if it is there and starts with the expected item', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1 } } }, { turn: 1, expected: mk.user('q1') });
      await s.storeRunUsage({ state: { usage: { requests: 2 } } }, { turn: 2 });
      assert.deepEqual(
        usageRows().map((r) => [r.user_turn_number, r.requests]),
        [
          [1, 1],
          [2, 2],
        ],
      );
      assert.deepEqual(logger.warnings, []);
      // Another turn's first item, a turn that is not there, another branch's turn: nothing written, each warned.
      await s.storeRunUsage({ state: { usage: { requests: 7 } } }, { turn: 2, expected: mk.user('q1') });
      await s.storeRunUsage({ state: { usage: { requests: 7 } } }, { turn: 3 });
      await s.createBranchFromTurn(2, 'alt');
      await s.storeRunUsage({ state: { usage: { requests: 7 } } }, { turn: 2, expected: mk.user('q2') });
      assert.deepEqual(
        usageRows().map((r) => [r.branch_id, r.user_turn_number, r.requests]),
        [
          ['main', 1, 1],
          ['main', 2, 2],
        ],
      );
      assert.deepEqual(logger.warnings, [
        "No usage stored for session s1: turn 2 of branch 'main' does not start with the expected item",
        "No usage stored for session s1: branch 'main' has no turn 3",
        "No usage stored for session s1: branch 'alt' has no turn 2",
      ]);
      // Not a user turn's number: logged, as every failure of storeRunUsage, never thrown.
      await s.storeRunUsage({ state: { usage: { requests: 7 } } }, { turn: 0 });
      await s.storeRunUsage({ state: { usage: { requests: 7 } } }, { turn: 1.5 });
      assert.equal(logger.errors.length, 2);
      assert.equal(usageRows().length, 2);
    });

    it('falls back to runContext.usage; state.usage wins when both exist', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ runContext: { usage: { requests: 4 } } });
      assert.equal(usageRows()[0]?.requests, 4);
      await s.storeRunUsage({ state: { usage: { requests: 6 } }, runContext: { usage: { requests: 9 } } });
      assert.equal(usageRows()[0]?.requests, 6);
    });

    it('is a no-op without usage', async () => {
      const s = await twoTurns();
      const before = usageRows();
      for (const source of [undefined, null, {}, { state: {} }, { state: { usage: null } }, { runContext: {} }, { state: null }]) {
        await s.storeRunUsage(source as never);
      }
      assert.deepEqual(usageRows(), before);
      assert.deepEqual(logger.errors, []);
      assert.deepEqual(logger.warnings, []);
    });

    it('§12 c: writes nothing and warns when the branch has no user turn', async () => {
      const s = ws.open({ logger, sessionId: 'fresh' });
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(usageRows(), []);
      assert.equal(logger.warnings.length, 1);
      assert.deepEqual(logger.errors, []);

      await s.addItems([mk.raw({ role: 'system', content: 'pre-user' }), mk.assistant('hi')]);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(usageRows(), [], 'turn 0 is no user turn');
      assert.equal(logger.warnings.length, 2);
    });

    it('§12 c: a branch made from turn 1 gets no usage row until its first user message', async () => {
      const s = await twoTurns();
      await s.createBranchFromTurn(1, 'fresh');
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(usageRows(), []);
      assert.equal(logger.warnings.length, 1);
      await s.addItems([mk.user('now')]);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(
        usageRows().map((r) => [r.branch_id, r.user_turn_number]),
        [['fresh', 1]],
      );
    });

    it('a logger with only error() is enough for the no-user-turn case', async () => {
      const errors: unknown[] = [];
      const s = ws.open({ logger: { error: (m, e) => void errors.push([m, e]) } });
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(usageRows(), []);
      assert.deepEqual(errors, []);
    });

    it('never throws: logs "Failed to store session usage" when closed, or when the write fails', async () => {
      const s = await twoTurns();
      execSql(ws.path(), 'DROP TABLE turn_usage');
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.equal(logger.errors.length, 1);
      assert.equal(logger.errors[0]?.message, 'Failed to store session usage');
      assert.ok(logger.errors[0]?.err instanceof Error);
      s.close();
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.equal(logger.errors.length, 2);
      assert.equal(logger.errors[1]?.message, 'Failed to store session usage');
      assert.equal((logger.errors[1]?.err as Error).message, 'SQLiteSession is closed');
    });

    it('refuses a negative count: logs it, keeps the row the turn had', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 1, totalTokens: 11 } } });
      const before = usageRows();
      for (const usage of [
        { requests: 1, inputTokens: -5 },
        { requests: 1, outputTokensDetails: [{ reasoning_tokens: -1 }] },
      ]) {
        await s.storeRunUsage({ state: { usage } });
      }
      assert.deepEqual(usageRows(), before);
      assert.deepEqual(
        logger.errors.map((e) => [e.message, (e.err as Error).name, (e.err as Error).message]),
        [
          ['Failed to store session usage', 'InvalidArgumentError', 'usage inputTokens must not be negative (got -5)'],
          ['Failed to store session usage', 'InvalidArgumentError', 'usage reasoning_tokens must not be negative (got -1)'],
        ],
      );
    });

    it('creates no generation row', async () => {
      const s = await twoTurns();
      execSql(ws.path(), 'DELETE FROM session_clear_generations');
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(query(ws.path(), 'SELECT * FROM session_clear_generations'), []);
      assert.equal(usageRows().length, 1);
    });
  });

  describe('getSessionUsage (§10.2)', () => {
    it('is null without rows', async () => {
      const s = await twoTurns();
      assert.equal(await s.getSessionUsage(), null);
      assert.equal(await s.getSessionUsage('main'), null);
    });

    it('sums over all branches when the id is omitted, null or "", else over that branch', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 1, totalTokens: 11 } } });
      await s.createBranchFromTurn(2, 'alt');
      await s.addItems([mk.user('alt')]);
      await s.storeRunUsage({ state: { usage: { requests: 2, inputTokens: 20, outputTokens: 2, totalTokens: 22 } } });
      await s.addItems([mk.user('alt 3')]);
      await s.storeRunUsage({ state: { usage: { requests: 4, inputTokens: 40, outputTokens: 4, totalTokens: 44 } } });
      const all = { requests: 7, inputTokens: 70, outputTokens: 7, totalTokens: 77, totalTurns: 3 };
      sameJson(await s.getSessionUsage(), all);
      sameJson(await s.getSessionUsage(null as unknown as string), all);
      sameJson(await s.getSessionUsage(''), all);
      sameJson(await s.getSessionUsage('main'), { requests: 1, inputTokens: 10, outputTokens: 1, totalTokens: 11, totalTurns: 1 });
      sameJson(await s.getSessionUsage('alt'), { requests: 6, inputTokens: 60, outputTokens: 6, totalTokens: 66, totalTurns: 2 });
      assert.equal(await s.getSessionUsage('nope'), null);
    });

    it('only counts its own session, and rows without a sessions row still count', async () => {
      const s = await twoTurns();
      const other = ws.open({ sessionId: 'other', logger });
      await other.addItems([mk.user('x')]);
      await other.storeRunUsage({ state: { usage: { requests: 9 } } });
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      execSql(ws.path(), "DELETE FROM agent_sessions WHERE session_id = 's1'");
      assert.equal((await s.getSessionUsage())?.requests, 1);
      assert.equal((await other.getSessionUsage())?.requests, 9);
    });

    it('is null when the requests sum is NULL; other NULL sums read 0', async () => {
      const s = await twoTurns();
      execSql(
        ws.path(),
        "INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens) VALUES ('s1', 'main', 1, NULL, 5)",
      );
      assert.equal(await s.getSessionUsage(), null);
      execSql(
        ws.path(),
        "INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens) VALUES ('s1', 'main', 2, 3, NULL, NULL, NULL)",
      );
      sameJson(await s.getSessionUsage(), { requests: 3, inputTokens: 5, outputTokens: 0, totalTokens: 0, totalTurns: 2 });
    });

    it('reads a count past 2^53 as the nearest double on either driver, and the file still lists', async () => {
      // node:sqlite threw "Value is too large to be represented as a JavaScript number" here, and in listSessions,
      // so an editor could not list the file at all; better-sqlite3 rounds, and both drivers now agree.
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 1, totalTokens: 11 } } });
      execSql(ws.path(), "UPDATE turn_usage SET total_tokens = 9007199254740993, input_tokens = 9007199254740993 WHERE session_id = 's1'");
      const rounded = 9007199254740992;
      sameJson(await s.getSessionUsage(), { requests: 1, inputTokens: rounded, outputTokens: 1, totalTokens: rounded, totalTurns: 1 });
      assert.equal(((await s.getTurnUsage(2)) as { totalTokens?: number }).totalTokens, rounded);
      assert.deepEqual(
        (await s.getTurnUsage()).map((t) => t.totalTokens),
        [rounded],
      );
      const db = openSessionDatabase(ws.path());
      try {
        assert.deepEqual(
          db.listSessions().map((x) => [x.sessionId, x.usage?.totalTokens]),
          [['s1', rounded]],
        );
      } finally {
        db.close();
      }
    });
  });

  describe('getTurnUsage (§10.2)', () => {
    it('with a number: that turn of the current branch, or {} (turn 0 too)', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({
        state: { usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15, inputTokensDetails: [{ cached_tokens: 4 }] } },
      });
      sameJson(await s.getTurnUsage(2), {
        requests: 1,
        inputTokens: 10,
        outputTokens: 5,
        totalTokens: 15,
        inputTokensDetails: { cache_write_tokens: 0, cached_tokens: 4 },
        outputTokensDetails: { reasoning_tokens: 0 },
      });
      sameJson(await s.getTurnUsage(1), {});
      sameJson(await s.getTurnUsage(0), {});
      sameJson(await s.getTurnUsage(3), {});
    });

    it('without a number: the branch rows by turn, userTurnNumber first', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 2 } } });
      execSql(
        ws.path(),
        `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details)
         VALUES ('s1', 'main', 1, 1, 2, 3, 5, NULL, '')`,
      );
      sameJson(await s.getTurnUsage(), [
        {
          userTurnNumber: 1,
          requests: 1,
          inputTokens: 2,
          outputTokens: 3,
          totalTokens: 5,
          inputTokensDetails: null,
          outputTokensDetails: null,
        },
        {
          userTurnNumber: 2,
          requests: 2,
          inputTokens: 0,
          outputTokens: 0,
          totalTokens: 0,
          inputTokensDetails: { cache_write_tokens: 0, cached_tokens: 0 },
          outputTokensDetails: { reasoning_tokens: 0 },
        },
      ]);
      sameJson(await s.getTurnUsage(null as unknown as undefined), await s.getTurnUsage());
    });

    it('decodes invalid details as null and keeps raw scalars (NULL included)', async () => {
      const s = await twoTurns();
      execSql(
        ws.path(),
        `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details)
         VALUES ('s1', 'main', 1, NULL, 2, NULL, 5, '{broken', '{"reasoning_tokens": 1, "extra": [1, NaN]}')`,
      );
      sameJson(await s.getTurnUsage(1), {
        requests: null,
        inputTokens: 2,
        outputTokens: null,
        totalTokens: 5,
        inputTokensDetails: null,
        outputTokensDetails: { reasoning_tokens: 1, extra: [1, NaN] },
      });
    });

    it('defaults to the current branch; an explicit branch is read as given', async () => {
      const s = await twoTurns();
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      await s.createBranchFromTurn(2, 'alt');
      await s.addItems([mk.user('alt')]);
      await s.storeRunUsage({ state: { usage: { requests: 7 } } });
      assert.deepEqual(
        (await s.getTurnUsage()).map((r) => [r.userTurnNumber, r.requests]),
        [[2, 7]],
      );
      assert.deepEqual(
        (await s.getTurnUsage(undefined, 'main')).map((r) => [r.userTurnNumber, r.requests]),
        [[2, 1]],
      );
      assert.equal(((await s.getTurnUsage(2, 'main')) as { requests: number }).requests, 1);
      assert.deepEqual(await s.getTurnUsage(undefined, 'nope'), []);
      sameJson(await s.getTurnUsage(2, 'nope'), {});
    });
  });
});
