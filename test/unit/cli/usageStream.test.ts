/**
 * `agent-sessions usage` written a page at a time (issue 43: it held every row, its table and its text at once) must
 * print exactly what the whole-table command printed: the same table (widths over every row and the totals, colours
 * or not) and the same JSON, byte for byte, across page boundaries, with branch ids in SQLite's order (U+0000 and
 * non-ASCII included) and rows without counts.
 */
import { strict as assert } from 'node:assert';
import { usage, USAGE_ROWS_PER_PAGE, type CommandContext } from '../../../src/cli/commands';
import { paint, table, type Terminal } from '../../../src/cli/terminal';
import { openSessionDatabase } from '../../../src/store';
import { sharedTurnRanges } from '../../../src/shared/turnOrigin';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { execSql, mk, query, Workspace } from '../../support/sessionHelpers';

/** The command as it was: every row read at once, then `table` or `JSON.stringify` over all of them. */
function oldUsage(path: string, sessionId: string, branchId: string | undefined, json: boolean, color: boolean): string {
  const db = openSessionDatabase(path, { readonly: true });
  try {
    const rows = db.getUsageRows(sessionId, branchId ?? null);
    const sum = (key: 'requests' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cachedTokens' | 'reasoningTokens') =>
      rows.reduce((s, r) => s + (r[key] ?? 0), 0);
    const totals = {
      turns: rows.length,
      requests: sum('requests'),
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
      totalTokens: sum('totalTokens'),
      cachedTokens: sum('cachedTokens'),
      reasoningTokens: sum('reasoningTokens'),
    };
    if (json) return `${JSON.stringify({ sessionId, branchId: branchId ?? null, rows, totals }, null, 2)}\n`;
    // With a branch, it is the branch that has none.
    if (rows.length === 0) return `${branchId === undefined ? sessionId : `${sessionId}, branch ${branchId}`}: no usage recorded\n`;
    const n = (v: number | null | undefined) => (v === null || v === undefined ? '–' : String(v));
    const head = ['BRANCH', 'TURN', 'REQUESTS', 'INPUT', 'CACHED', 'OUTPUT', 'REASONING', 'TOTAL'].map((h) => paint(color, 'bold', h));
    const body = rows.map((r) => [
      r.branchId,
      String(r.turn),
      n(r.requests),
      n(r.inputTokens),
      n(r.cachedTokens),
      n(r.outputTokens),
      n(r.reasoningTokens),
      n(r.totalTokens),
    ]);
    const total = [
      paint(color, 'bold', 'total'),
      String(totals.turns),
      String(totals.requests),
      String(totals.inputTokens),
      String(totals.cachedTokens),
      String(totals.outputTokens),
      String(totals.reasoningTokens),
      paint(color, 'bold', String(totals.totalTokens)),
    ];
    return `${table([head, ...body, total], new Set([1, 2, 3, 4, 5, 6, 7]))}\n`;
  } finally {
    db.close();
  }
}

async function newUsage(path: string, sessionId: string, branchId: string | undefined, json: boolean, color: boolean) {
  const chunks: string[] = [];
  const term = { color } as Terminal;
  const ctx: CommandContext = { term, json, signal: new AbortController().signal };
  await usage(ctx, path, sessionId, branchId, async (chunk) => {
    chunks.push(chunk);
  });
  return { text: chunks.join(''), chunks: chunks.length };
}

describe('agent-sessions usage, a page at a time (issue 43)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-usage-')));
  afterEach(() => ws.cleanup());

  it('prints what the whole-table command printed, across pages, in every mode', async function () {
    this.timeout(60_000);
    const s = ws.open();
    await s.addItems([mk.user('q1'), mk.assistant('a1')]);
    s.close();
    const path = ws.path();
    // More rows than two pages, over branches whose ids sort differently as UTF-16 and as UTF-8 bytes, one holding
    // U+0000, and rows whose counts are missing or odd.
    const branches = ['side', 'alt', 'a\u0000b', 'é', '\u{1F600}', '\uFFFD'];
    const per = Math.ceil((2 * USAGE_ROWS_PER_PAGE + 10) / branches.length);
    for (const [b, branch] of branches.entries()) {
      // Rows of its own, so the branch is in the tree (`usage --branch` names only branches that have some).
      execSql(
        path,
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
           branch_turn_number) SELECT session_id, message_id, ?, message_type, sequence_number + 10 * (? + 1), user_turn_number,
           branch_turn_number FROM message_structure WHERE session_id = 's1' AND branch_id = 'main'`,
        branch,
        b,
      );
      execSql(
        path,
        `WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < ?)
         INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
           input_tokens_details, output_tokens_details)
         SELECT 's1', ?, n, CASE WHEN n % 7 = 0 THEN NULL ELSE n % 3 END, n * 10 + ?, n, n * 11 + ?,
           CASE WHEN n % 5 = 0 THEN NULL ELSE '{"cached_tokens": ' || (n % 13) || '}' END,
           CASE WHEN n % 4 = 0 THEN 'not json' ELSE '{"reasoning_tokens": ' || (n * 1000) || '}' END FROM t`,
        per,
        branch,
        b,
        b,
      );
    }
    let compared = 0;
    for (const branchId of [undefined, 'side', 'a\u0000b', '\u{1F600}']) {
      for (const json of [false, true]) {
        for (const color of [false, true]) {
          const expected = oldUsage(path, 's1', branchId, json, color);
          const got = await newUsage(path, 's1', branchId, json, color);
          assert.equal(got.text, expected, `${branchId ?? 'session'} ${json ? 'json' : 'table'} ${color ? 'colour' : 'plain'}`);
          compared++;
          if (branchId === undefined) assert.ok(got.chunks > 2, `written in pieces (${got.chunks})`);
        }
      }
    }
    assert.equal(compared, 16);
  });

  it("counts stored as text (a column whose type was altered) are counts: the rows add up to the session's total", async () => {
    const path = ws.path();
    copyFileSync(join(__dirname, '..', '..', 'fixtures', 'doctor', 'altered-schema.db'), path);
    const [{ total, session }] = query<{ total: number; session: string }>(
      path,
      'SELECT sum(total_tokens) AS total, session_id AS session FROM turn_usage GROUP BY session_id ORDER BY session_id LIMIT 1',
    ) as [{ total: number; session: string }];
    assert.equal(query<{ t: string }>(path, 'SELECT typeof(total_tokens) AS t FROM turn_usage LIMIT 1')[0]!.t, 'text');
    const json = JSON.parse((await newUsage(path, session, undefined, true, false)).text) as {
      rows: { totalTokens: number | null }[];
      totals: { totalTokens: number };
    };
    assert.ok(json.rows.every((r) => typeof r.totalTokens === 'number'));
    assert.equal(json.totals.totalTokens, total);
  });

  it("--branch lists the branch's whole conversation across pages, as the Tokens tab's branch scope does", async function () {
    this.timeout(60_000);
    const s = ws.open();
    // A fork past the first page: alt shares main's turns 1…1049 and runs 1050…1060; its own row for copied turn 10
    // (usage stored right after branching) is the turn's.
    const fork = USAGE_ROWS_PER_PAGE + 50;
    const turns = (from: number, to: number, tag: string) =>
      Array.from({ length: to - from + 1 }, (_, i) => [mk.user(`q${from + i}`), mk.assistant(`${tag}${from + i}`)]).flat();
    await s.addItems(turns(1, fork + 5, 'm'));
    await s.createBranchFromTurn(fork, 'alt');
    await s.addItems(turns(fork, fork + 10, 'a'));
    s.close();
    const path = ws.path();
    const insert = `WITH RECURSIVE t(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM t WHERE n < ?)
      INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
        input_tokens_details, output_tokens_details)
      SELECT 's1', ?, n, 1, n * 10 + ?, n, n * 11 + ?, '{"cached_tokens": ' || (n % 13) || '}', NULL FROM t`;
    execSql(path, insert, 1, fork + 5, 'main', 0, 0);
    execSql(path, insert, fork, fork + 10, 'alt', 7, 7);
    execSql(path, insert, 10, 10, 'alt', 3, 3);
    const db = openSessionDatabase(path, { readonly: true });
    let expected: ReturnType<typeof db.getUsagePage>;
    try {
      const tree = db.getBranchTree('s1');
      expected = db.getUsagePage('s1', 'alt', { limit: 10 * USAGE_ROWS_PER_PAGE, shared: sharedTurnRanges(tree, 'alt') });
    } finally {
      db.close();
    }
    assert.equal(expected.rowCount, fork + 10);
    const got = JSON.parse((await newUsage(path, 's1', 'alt', true, false)).text) as {
      rows: unknown[];
      totals: { turns: number; totalTokens: number; cachedTokens: number };
    };
    assert.deepEqual(got.rows, expected.rows);
    assert.deepEqual(
      [got.totals.turns, got.totals.totalTokens, got.totals.cachedTokens],
      [expected.rowCount, expected.totals.totalTokens, expected.totals.cachedTokens],
    );
    // The table names the branch that ran each turn.
    const text = (await newUsage(path, 's1', 'alt', false, false)).text;
    assert.match(text, /\nmain\s+9\s/);
    assert.match(text, /\nalt\s+10\s+1\s+103\s/);
    assert.match(text, new RegExp(`\\nmain\\s+${fork - 1}\\s[^\\n]*\\nalt\\s+${fork}\\s`));
  });

  it('says so when there is no usage, in both forms', async () => {
    const s = ws.open();
    await s.addItems([mk.user('q1'), mk.assistant('a1')]);
    s.close();
    for (const json of [false, true]) {
      assert.equal((await newUsage(ws.path(), 's1', undefined, json, false)).text, oldUsage(ws.path(), 's1', undefined, json, false));
    }
    // Asked for a branch, the answer names the branch: the session may have usage on others.
    assert.equal((await newUsage(ws.path(), 's1', 'main', false, false)).text, 's1, branch main: no usage recorded\n');
  });
});
