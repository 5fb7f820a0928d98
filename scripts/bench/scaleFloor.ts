/**
 * The plain-SQL floor of the scale benchmark: for each inspector call, the best hand-written indexed query (or few)
 * for the same answer, on a raw better-sqlite3 connection, sharing no code with src/store. Each floor returns the
 * answer in the store's result shape (or the parts of it the comparison checks), so the benchmark can say whether
 * the two agree.
 *
 * Where a floor relies on an invariant of files the SDKs write, it says so; `resultsAgree` in the report shows that
 * the answer is still the store's on the generated files:
 * - each user row opens its own turn and turns are numbered 1, 2, … without gaps (spec §7), so a branch's user rows
 *   number its last turn, and the turns missing a usage row number its turns minus its usage rows;
 * - `branch_turn_number` equals `user_turn_number` (spec §12 e 8), so the indexed one can stand for the other;
 * - a branch copies its source's turns whole and in order (spec §8.3), so "the turns up to t are shared" is
 *   monotone in t and the fork turn can be found by bisection, comparing one turn's message ids at a time; and it is
 *   written in one batch with consecutive sequence numbers, so the shared prefix's length is a span of them.
 */
import Database from 'better-sqlite3';
import { TOOL_TYPES_SQL } from './floor';

type Row = Record<string, unknown>;
type Params = readonly unknown[];

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A raw connection that remembers the statements it ran (with their parameters) while `recording` is set. */
export class FloorConnection {
  readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  recording: { sql: string; params: Params }[] | null = null;

  constructor(path: string, options: { readonly: boolean }) {
    this.db = new Database(path, { readonly: options.readonly, fileMustExist: true });
    if (!options.readonly) {
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = OFF');
    }
  }

  private stmt(sql: string, params: Params): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    this.recording?.push({ sql, params });
    return s;
  }
  all<T = Row>(sql: string, ...params: unknown[]): T[] {
    return this.stmt(sql, params).all(...params) as T[];
  }
  get<T = Row>(sql: string, ...params: unknown[]): T | undefined {
    return this.stmt(sql, params).get(...params) as T | undefined;
  }
  run(sql: string, ...params: unknown[]): number {
    return this.stmt(sql, params).run(...params).changes;
  }
  close(): void {
    this.db.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Reads

/** The branch ids of a session: one index seek per id along idx_structure_branch (a skip-scan). */
function branchIds(c: FloorConnection, sessionId: string): string[] {
  const out: string[] = [];
  let row = c.get<{ b: string | null }>('SELECT MIN(branch_id) AS b FROM message_structure WHERE session_id = ?', sessionId);
  while (row && row.b !== null) {
    out.push(row.b);
    row = c.get<{ b: string | null }>(
      'SELECT MIN(branch_id) AS b FROM message_structure WHERE session_id = ? AND branch_id > ?',
      sessionId,
      row.b,
    );
  }
  return out;
}

export interface FloorSessionSummary {
  sessionId: string;
  messageCount: number;
  branchCount: number;
  usage: { requests: number; inputTokens: number; outputTokens: number; totalTokens: number; totalTurns: number } | null;
}

/** listSessions: the sessions table, message counts from their covering index, branch counts by skip-scan, usage sums. */
export function floorListSessions(c: FloorConnection): FloorSessionSummary[] {
  const all = new Map<string, FloorSessionSummary & { updatedAt: string | null }>();
  const entry = (id: string) => {
    let e = all.get(id);
    if (!e) all.set(id, (e = { sessionId: id, messageCount: 0, branchCount: 0, usage: null, updatedAt: null }));
    return e;
  };
  for (const r of c.all<{ session_id: string; updated_at: string | null }>('SELECT session_id, updated_at FROM agent_sessions')) {
    entry(r.session_id).updatedAt = r.updated_at;
  }
  for (const r of c.all<{ session_id: string; n: number }>('SELECT session_id, COUNT(*) AS n FROM agent_messages GROUP BY session_id')) {
    entry(r.session_id).messageCount = r.n;
  }
  // Every session with structure rows, then its branches: one seek each along idx_structure_branch. (A row-value
  // seek, `(session_id, branch_id) > (?, ?)`, would be one statement, but SQLite turns it into a scan from session_id.)
  let next = c.get<{ s: string | null }>('SELECT MIN(session_id) AS s FROM message_structure');
  while (next && next.s !== null) {
    entry(next.s).branchCount = branchIds(c, next.s).length;
    next = c.get<{ s: string | null }>('SELECT MIN(session_id) AS s FROM message_structure WHERE session_id > ?', next.s);
  }
  for (const r of c.all<{ sid: string; requests: number; input: number; output: number; total: number; turns: number }>(
    `SELECT session_id AS sid, SUM(requests) AS requests, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
       SUM(total_tokens) AS total, COUNT(*) AS turns FROM turn_usage GROUP BY session_id`,
  )) {
    entry(r.sid).usage = { requests: r.requests, inputTokens: r.input, outputTokens: r.output, totalTokens: r.total, totalTurns: r.turns };
  }
  return [...all.values()]
    .sort((a, b) =>
      a.updatedAt !== b.updatedAt ? ((a.updatedAt ?? '') < (b.updatedAt ?? '') ? 1 : -1) : byCodeUnit(a.sessionId, b.sessionId),
    )
    .map(({ updatedAt: _, ...rest }) => rest);
}

export interface FloorBranchNode {
  branchId: string;
  messageCount: number;
  userTurns: number;
  parentBranchId: string | null;
  forkTurn: number | null;
  sharedItemCount: number;
}

/**
 * getBranchTree: per branch a covering-index count (the one pass no index can spare: SQLite keeps no counts) and a
 * few seeks; fork points by bisection over turns; the shared prefix's length as a span of sequence numbers (a copy
 * is written in one batch with consecutive sequence numbers), so it costs two seeks instead of a count.
 */
export function floorBranchTree(c: FloorConnection, sessionId: string): FloorBranchNode[] {
  const branches = branchIds(c, sessionId).map((branchId) => {
    // Three statements: combined, SQLite would compute all three in one pass that reads the table for the turn.
    const one = <T>(sql: string): T => c.get<{ v: T }>(sql, sessionId, branchId)!.v;
    const counts = {
      n: one<number>('SELECT COUNT(*) AS v FROM message_structure WHERE session_id = ? AND branch_id = ?'),
      first: one<number>(
        'SELECT MIN(id) AS v FROM message_structure INDEXED BY idx_structure_branch WHERE session_id = ? AND branch_id = ?',
      ),
      last: one<number | null>('SELECT MAX(user_turn_number) AS v FROM message_structure WHERE session_id = ? AND branch_id = ?'),
    };
    const firstSeq = c.get<{ seq: number }>('SELECT sequence_number AS seq FROM message_structure WHERE id = ?', counts.first)!.seq;
    // Turns are numbered 1, 2, … without gaps, each opened by one user row: the last turn is the number of user rows.
    const lastTurn = counts.last ?? 0;
    return { branchId, messageCount: counts.n, firstRowId: counts.first, firstSeq, userTurns: lastTurn, lastTurn };
  });
  branches.sort((a, b) => a.firstRowId - b.firstRowId);
  const turnIds = (branch: string, turn: number): string | null =>
    c.get<{ ids: string | null }>(
      `SELECT group_concat(message_id) AS ids FROM (SELECT message_id FROM message_structure INDEXED BY idx_structure_turn
       WHERE session_id = ? AND branch_id = ? AND user_turn_number = ? ORDER BY sequence_number)`,
      sessionId,
      branch,
      turn,
    )?.ids ?? null;
  const sameTurn = (a: string, b: string, turn: number): boolean => {
    const x = turnIds(a, turn);
    return x !== null && x === turnIds(b, turn);
  };
  return branches.map((b, i) => {
    const node: FloorBranchNode = {
      branchId: b.branchId,
      messageCount: b.messageCount,
      userTurns: b.userTurns,
      parentBranchId: null,
      forkTurn: null,
      sharedItemCount: 0,
    };
    if (i === 0 || b.branchId === 'main') return node;
    let best: { parent: string; lastShared: number } | null = null;
    for (let j = 0; j < i; j++) {
      const p = branches[j]!;
      let lo = 0; // the turns 1..lo are shared
      let hi = Math.min(b.lastTurn, p.lastTurn);
      if (hi < 1 || !sameTurn(b.branchId, p.branchId, 1)) continue;
      lo = 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (sameTurn(b.branchId, p.branchId, mid)) lo = mid;
        else hi = mid - 1;
      }
      if (!best || lo > best.lastShared) best = { parent: p.branchId, lastShared: lo };
    }
    if (!best) return { ...node, forkTurn: 1 };
    const lastSeq = c.get<{ seq: number }>(
      `SELECT MAX(sequence_number) AS seq FROM message_structure INDEXED BY idx_structure_turn
       WHERE session_id = ? AND branch_id = ? AND user_turn_number = ?`,
      sessionId,
      b.branchId,
      best.lastShared,
    )!.seq;
    return { ...node, parentBranchId: best.parent, forkTurn: best.lastShared + 1, sharedItemCount: lastSeq - b.firstSeq + 1 };
  });
}

/** usedBranchIds: the ids by skip-scan, the reservations, and `main`. */
export function floorUsedBranchIds(c: FloorConnection, sessionId: string): string[] {
  const ids = new Set(['main', ...branchIds(c, sessionId)]);
  for (const r of c.all<{ b: string }>('SELECT branch_id AS b FROM branch_reservations WHERE session_id = ?', sessionId)) ids.add(r.b);
  return [...ids].sort(byCodeUnit);
}

/** The content preview of a user message: its text cut to 100 code points. */
function preview(messageData: string): string {
  const item = JSON.parse(messageData) as { content?: unknown };
  const text = typeof item.content === 'string' ? item.content : JSON.stringify(item.content);
  const points = Array.from(text);
  return points.length > 100 ? points.slice(0, 100).join('') + '...' : text;
}

const turnPageSql = (backwards: boolean): string =>
  `SELECT s.user_turn_number AS turn, m.message_data, u.total_tokens
   FROM message_structure s INDEXED BY idx_structure_turn JOIN agent_messages m ON m.id = s.message_id
   LEFT JOIN turn_usage u ON u.session_id = s.session_id AND u.branch_id = s.branch_id AND u.user_turn_number = s.user_turn_number
   WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number ${backwards ? '<' : '>'} ? AND s.message_type = 'user'
   ORDER BY s.user_turn_number ${backwards ? 'DESC' : ''} LIMIT ?`;

type TurnRow = { turn: number; message_data: string; total_tokens: number | null };
const turnOf = (r: TurnRow) => ({ turn: r.turn, totalTokens: r.total_tokens, preview: preview(r.message_data) });

/** getTurnsPage: a seek on idx_structure_turn, the message by rowid, the usage row by its unique index. */
export function floorTurnsPage(c: FloorConnection, sessionId: string, branchId: string, afterTurn: number, limit: number) {
  return c.all<TurnRow>(turnPageSql(false), sessionId, branchId, afterTurn, limit).map(turnOf);
}

/** getTurnsPageBefore (the End key): the same seek, walking the index backwards from `beforeTurn`. */
export function floorTurnsPageBefore(c: FloorConnection, sessionId: string, branchId: string, beforeTurn: number, limit: number) {
  return c.all<TurnRow>(turnPageSql(true), sessionId, branchId, beforeTurn, limit).reverse().map(turnOf);
}

/** getItemsPage: a seek on idx_structure_branch_seq and each message by rowid, decoded. */
export function floorItemsPage(c: FloorConnection, sessionId: string, branchId: string, afterSequence: number, limit: number) {
  return c
    .all<{ sequence_number: number; message_type: string; message_data: string }>(
      `SELECT s.sequence_number, s.message_type, m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.sequence_number > ? ORDER BY s.sequence_number LIMIT ?`,
      sessionId,
      branchId,
      afterSequence,
      limit,
    )
    .map((r) => ({ sequenceNumber: r.sequence_number, type: r.message_type, item: JSON.parse(r.message_data) as unknown }));
}

/** getTurnItems: one turn's range of idx_structure_turn, decoded. */
export function floorTurnItems(c: FloorConnection, sessionId: string, branchId: string, turn: number) {
  return c
    .all<{ sequence_number: number; message_type: string; message_data: string }>(
      `SELECT s.sequence_number, s.message_type, m.message_data FROM message_structure s INDEXED BY idx_structure_turn
       JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number = ? ORDER BY s.sequence_number`,
      sessionId,
      branchId,
      turn,
    )
    .map((r) => ({ sequenceNumber: r.sequence_number, type: r.message_type, item: JSON.parse(r.message_data) as unknown }));
}

/** getUsageRows: the rows in unique-index order, detail counts extracted by SQLite. */
export function floorUsageRows(c: FloorConnection, sessionId: string, branchId: string | null) {
  const select = `SELECT branch_id AS branchId, user_turn_number AS turn, requests, input_tokens AS inputTokens,
      output_tokens AS outputTokens, total_tokens AS totalTokens,
      json_extract(input_tokens_details, '$.cached_tokens') AS cachedTokens,
      json_extract(output_tokens_details, '$.reasoning_tokens') AS reasoningTokens FROM turn_usage`;
  return branchId === null
    ? c.all(`${select} WHERE session_id = ? ORDER BY branch_id, user_turn_number`, sessionId)
    : c.all(`${select} WHERE session_id = ? AND branch_id = ? ORDER BY user_turn_number`, sessionId, branchId);
}

/** getUsagePage sorted by turn: one page from the unique index, the count and totals summed by SQLite. */
export function floorUsagePage(c: FloorConnection, sessionId: string, branchId: string | null, offset: number, limit: number) {
  const where = branchId === null ? 'session_id = ?' : 'session_id = ? AND branch_id = ?';
  const params = branchId === null ? [sessionId] : [sessionId, branchId];
  const totals = c.get<Row>(
    `SELECT COUNT(*) AS rowCount, SUM(requests) AS requests, SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens,
       SUM(total_tokens) AS totalTokens, SUM(json_extract(input_tokens_details, '$.cached_tokens')) AS cachedTokens,
       SUM(json_extract(output_tokens_details, '$.reasoning_tokens')) AS reasoningTokens FROM turn_usage WHERE ${where}`,
    ...params,
  )!;
  const rows = c.all(
    `SELECT branch_id AS branchId, user_turn_number AS turn, requests, input_tokens AS inputTokens, output_tokens AS outputTokens,
       total_tokens AS totalTokens, json_extract(input_tokens_details, '$.cached_tokens') AS cachedTokens,
       json_extract(output_tokens_details, '$.reasoning_tokens') AS reasoningTokens
     FROM turn_usage WHERE ${where} ORDER BY branch_id, user_turn_number LIMIT ? OFFSET ?`,
    ...params,
    limit,
    offset,
  );
  const { rowCount, ...sums } = totals;
  return { rows, rowCount: rowCount as number, totals: sums };
}

/**
 * getToolTotals: calls and distinct turns per tool counted by SQLite in one pass over the scope's rows (tool names and
 * types have no index, so that pass is the floor), then each tool's first `listed` turns by an ordered seek per branch.
 */
export function floorToolTotals(c: FloorConnection, sessionId: string, branchId: string | null, listed: number) {
  const where = branchId === null ? 'session_id = ?' : 'session_id = ? AND branch_id = ?';
  const params = branchId === null ? [sessionId] : [sessionId, branchId];
  // A call copied into several branches keeps its message id: across the session each stored call counts once.
  // Across the session a call counts once, for the branch that wrote it first (its smallest sequence number: SQLite
  // takes the bare columns from the MIN row), and its turns are (branch, turn) pairs, as the store counts them.
  const tools =
    branchId === null
      ? c.all<{ tool: string; calls: number; turnCount: number }>(
          `SELECT tool, COUNT(*) AS calls,
             COUNT(DISTINCT CASE WHEN turn IS NOT NULL THEN CAST(branch_id AS BLOB) || x'00' || turn END) AS turnCount
           FROM (SELECT COALESCE(tool_name, '') AS tool, branch_id, user_turn_number AS turn, MIN(sequence_number)
                 FROM message_structure WHERE ${where} AND message_type IN (${TOOL_TYPES_SQL}) GROUP BY message_id)
           GROUP BY tool ORDER BY tool`,
          ...params,
        )
      : c.all<{ tool: string; calls: number; turnCount: number }>(
          `SELECT COALESCE(tool_name, '') AS tool, COUNT(*) AS calls, COUNT(DISTINCT user_turn_number) AS turnCount
           FROM message_structure WHERE ${where} AND message_type IN (${TOOL_TYPES_SQL}) GROUP BY tool ORDER BY tool`,
          ...params,
        );
  const branches = branchId === null ? branchIds(c, sessionId) : [branchId];
  return tools.map((t) => {
    const turns = new Set<number>();
    for (const b of branches) {
      for (const r of c.all<{ turn: number }>(
        `SELECT DISTINCT user_turn_number AS turn FROM message_structure INDEXED BY idx_structure_turn
         WHERE session_id = ? AND branch_id = ? AND user_turn_number IS NOT NULL AND message_type IN (${TOOL_TYPES_SQL})
           AND COALESCE(tool_name, '') = ? ORDER BY user_turn_number LIMIT ?`,
        sessionId,
        b,
        t.tool,
        listed,
      )) {
        turns.add(r.turn);
      }
    }
    const first = [...turns].sort((a, b) => a - b).slice(0, listed);
    return { toolName: t.tool, calls: t.calls, turns: first, turnCount: t.turnCount };
  });
}

/**
 * getTurnsWithoutUsage: per branch, from its first own turn (`fromTurns`, default 1), the number missing is the turns
 * there minus the usage rows there (turns are numbered without gaps), both answered by seeks and covering-index counts;
 * only the first `limit` missing turns are looked up, by an anti-join along idx_structure_turn.
 */
export function floorTurnsWithoutUsage(
  c: FloorConnection,
  sessionId: string,
  branchId: string | null,
  fromTurns: ReadonlyMap<string, number>,
  limit: number,
) {
  const turns: { branchId: string; turn: number }[] = [];
  let count = 0;
  for (const b of branchId === null ? branchIds(c, sessionId) : [branchId]) {
    const from = Math.max(1, fromTurns.get(b) ?? 1);
    const last = c.get<{ t: number | null }>(
      'SELECT MAX(user_turn_number) AS t FROM message_structure WHERE session_id = ? AND branch_id = ?',
      sessionId,
      b,
    )!.t;
    if (last === null || last < from) continue;
    const used = c.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?',
      sessionId,
      b,
      from,
      last,
    )!.n;
    const missing = last - from + 1 - used;
    if (missing <= 0) continue;
    count += missing;
    if (turns.length >= limit) continue;
    for (const r of c.all<{ turn: number }>(
      `SELECT DISTINCT s.user_turn_number AS turn FROM message_structure s INDEXED BY idx_structure_turn
       WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number >= ? AND NOT EXISTS (
         SELECT 1 FROM turn_usage u WHERE u.session_id = ? AND u.branch_id = ? AND u.user_turn_number = s.user_turn_number)
       ORDER BY s.user_turn_number LIMIT ?`,
      sessionId,
      b,
      from,
      sessionId,
      b,
      limit - turns.length,
    )) {
      turns.push({ branchId: b, turn: r.turn });
    }
  }
  return { turns, count };
}

// ---------------------------------------------------------------------------------------------------------------
// Writes (on a copy of the file; WAL and synchronous FULL, as the store's default)

/** createBranchFromTurn(turn, name) from `source`: a check, a reservation, and one INSERT … SELECT over the prefix. */
export function floorCreateBranch(c: FloorConnection, sessionId: string, source: string, turn: number, name: string): number {
  return c.db
    .transaction(() => {
      const user = c.get(
        `SELECT 1 AS one FROM message_structure WHERE session_id = ? AND branch_id = ? AND user_turn_number = ?
       AND branch_turn_number = ? AND message_type = 'user' LIMIT 1`,
        sessionId,
        source,
        turn,
        turn,
      );
      if (!user) throw new Error(`floor: no user message at turn ${turn}`);
      if (c.run('INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) VALUES (?, ?)', sessionId, name) !== 1) {
        throw new Error(`floor: branch ${name} already used`);
      }
      return c.run(
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
         branch_turn_number, tool_name)
       SELECT session_id, message_id, ?, message_type,
         (SELECT MAX(sequence_number) FROM message_structure WHERE session_id = ?) + ROW_NUMBER() OVER (ORDER BY sequence_number),
         user_turn_number, branch_turn_number, tool_name
       FROM message_structure WHERE session_id = ? AND branch_id = ? AND user_turn_number < ? AND branch_turn_number < ?
       ORDER BY sequence_number`,
        name,
        sessionId,
        sessionId,
        source,
        turn,
        turn,
      );
    })
    .immediate();
}

/** One turn of four small items on a branch (untimed set-up for deleteBranch, so it has messages of its own). */
export function floorAddTurn(c: FloorConnection, sessionId: string, branchId: string, turn: number, texts: readonly string[]): void {
  c.db
    .transaction(() => {
      let seq = c.get<{ s: number }>('SELECT MAX(sequence_number) AS s FROM message_structure WHERE session_id = ?', sessionId)!.s;
      const types = ['user', 'function_call', 'function_call_output', 'assistant'];
      texts.forEach((text, i) => {
        const id = c.db.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)').run(sessionId, text).lastInsertRowid;
        c.run(
          `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
             branch_turn_number, tool_name) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
          sessionId,
          id,
          branchId,
          types[i % types.length],
          ++seq,
          turn,
          turn,
        );
      });
    })
    .immediate();
}

/**
 * deleteBranch: the branch's usage and structure rows, and the messages only it referenced. `message_id` has no index,
 * so finding whether another branch still holds a message reads the session's rows: the floor the issue allows
 * ("at most its session's rows").
 */
export function floorDeleteBranch(c: FloorConnection, sessionId: string, branchId: string): number {
  return c.db
    .transaction(() => {
      c.run('DELETE FROM turn_usage WHERE session_id = ? AND branch_id = ?', sessionId, branchId);
      const orphans = c.run(
        `DELETE FROM agent_messages WHERE session_id = ?
       AND id IN (SELECT message_id FROM message_structure WHERE session_id = ? AND branch_id = ?)
       AND id NOT IN (SELECT message_id FROM message_structure WHERE session_id = ? AND branch_id <> ?)`,
        sessionId,
        sessionId,
        branchId,
        sessionId,
        branchId,
      );
      c.run('DELETE FROM message_structure WHERE session_id = ? AND branch_id = ?', sessionId, branchId);
      return orphans;
    })
    .immediate();
}

// ---------------------------------------------------------------------------------------------------------------
// Plans

/** `EXPLAIN QUERY PLAN` of `sql` with `params` on `db`, one indented line per plan node. */
export function explain(db: Database.Database, sql: string, params: Params): string[] {
  try {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { id: number; parent: number; detail: string }[];
    const depth = new Map<number, number>([[0, -1]]);
    return rows.map((r) => {
      const d = (depth.get(r.parent) ?? -1) + 1;
      depth.set(r.id, d);
      return `${'  '.repeat(d)}${r.detail}`;
    });
  } catch (err) {
    return [`(could not explain: ${err instanceof Error ? err.message : String(err)})`];
  }
}
