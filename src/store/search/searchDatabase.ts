/**
 * Searching one session file: every session, every branch, in rowid batches. Each batch is one short read (its own
 * snapshot) of a bounded rowid range with the SQL prefilter applied, then the exact JS test on the rows that pass;
 * hits go to `onHits` batch by batch, so the first ones arrive after the first batch, memory stays flat whatever the
 * file's size, and `signal` stops the scan between two batches.
 *
 * Structured sessions are read through `message_structure` (which carries the branch and turn), joined to the
 * messages by primary key; a message shared by several branches (a branch copies the turns before its fork, spec
 * §8.3) is reported once, at its first structure row, which is the branch that ran it, with the branches sharing it.
 * Sessions without structure rows (plain `SQLiteSession`) are one branch, `main`, their turns counted as the
 * inspector counts them (spec §7).
 */
import type { SessionDatabase } from '../inspector/sessionDatabase';
import { decodeMessageData } from '../inspector/rowDecoding';
import { quoteIdentifier } from '../inspector/tableDiscovery';
import { PLAIN_BRANCH_ID } from '../inspector/plainSessions';
import type { QueryContext } from '../inspector/queryContext';
import { foldForSearch } from '../format/conversationText';
import { displayType } from '../../shared/itemText';
import { turnOrigin, type ForkFacts } from '../../shared/turnOrigin';
import { readBranchForks } from '../inspector/branchTree';
import { messageTypeOf } from '../format/itemClassification';
import { itemFacts, rawCouldMatch } from './itemMatch';
import type { TurnSet } from './reviewTurns';
import { HitTester, ScanProgress, type HitPlace, type SearchHit, type SearchOptions, type SearchSummary } from './searchHits';
import { isRawSearchable, rolesDecidedByType, sqlPrefilter, structureTypeCondition, toolTypeCondition } from './sqlPrefilter';
import { reviewOnly, type SearchQuery } from './searchQuery';
import { indexServes, ruledOutByIndex, type RuledOut } from './toolIndex';
import { keptScanFacts, type KeptScanFacts } from './keptScanFacts';

/** A batch aims at this much time: short enough for a prompt first hit and cancel, long enough to cost little. */
const TARGET_BATCH_MS = 40;
// Small: a common word matches nearly every row, and the first batch's hits (each with its snippet) are what the user
// waits for; 1,000 rows put the first hits of `weather` on the 1 GB bench file at 280–380 ms, 200 rows at 130–230 ms.
const FIRST_BATCH_ROWS = 200;
const MAX_BATCH_ROWS = 50_000;
/**
 * The most rows one read hands over with their text: a batch of a common word's rows would otherwise hold tens of MB
 * of text at once (a 50,000-row batch, each row 1.6 KB read as UTF-16), the CLI's peak on the bench's file A.
 */
const MAX_ROWS_READ = 2_000;

/**
 * A structure row with its message, as `structureSql` and `byIdSql` select it: an array (`arrays()`), since building an
 * object of nine columns for each of a hit-heavy query's rows cost a sixth of its scan.
 */
type StructureRow = [
  sid: number,
  sessionId: string,
  branchId: string,
  messageId: number,
  sequenceNumber: number,
  messageType: string | null,
  toolName: string | null,
  turn: number | null,
  data: unknown,
];

interface PlainRow {
  id: number;
  data: unknown;
  is_user: number | null;
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Searches every session and branch of `db`; see the module comment. Errors of the file are `SessionDatabaseError`s. */
export async function searchDatabase(db: SessionDatabase, query: SearchQuery, options: SearchOptions): Promise<SearchSummary> {
  const progress = new ScanProgress(options);
  const summary = progress.summary;
  const state = new ScanState(db, query, options.sessionId, options.turns);
  const structured = db.tables.messageStructure;
  const batches = new BatchSize();
  // The review filters name a few turns: their rows, found by the (session, branch, turn) index, are every row that can
  // match; the rest of the file is decided without being read. When they fit one read, nothing else of the structured
  // pass is needed (no verdicts: a search naming 100 turns of file A spent a tenth of its time making them).
  const few = structured ? state.turnRows(options.turns) : null;
  if (few) {
    progress.emit(state.hitsOf(few.rows));
    summary.rowsScanned = few.structureMax;
    options.onProgress?.(summary.rowsScanned, few.structureMax);
    await searchPlain(db, state, progress, options, few.structureMax, batches, few.plain);
    return progress.finish(() => countMessages(db, options.sessionId));
  }
  const [structureMax, messageMax] = structured
    ? db.readWith((ctx) => [
        Number(ctx.stmt('SELECT max(id) AS m FROM message_structure').get<{ m: number | null }>()?.m ?? 0),
        Number(ctx.stmt(`SELECT max(id) AS m FROM ${quoteIdentifier(ctx.tables.messages)}`).get<{ m: number | null }>()?.m ?? 0),
      ])
    : [0, 0];
  state.keepVerdicts(messageMax);
  // The index of tool items (toolIndex.ts) rules out, before the scan, every message `tool:` or `is:failed` cannot
  // match; the messages it keeps are judged and tested as without it.
  if (structured && options.index && indexServes(query) && state.keepsVerdicts()) {
    const ruled = ruledOutByIndex(options.index, db, query, messageMax, options.signal);
    if (ruled) state.ruleOut(ruled, query.text === '');
  }
  const turnRows = structured ? state.turnRowIds(options.turns, structureMax) : null;
  if (turnRows) {
    // More rows than one read holds: their ids first, then the rows a read at a time.
    for (let at = 0; at < turnRows.length && !progress.stopped(); at += MAX_ROWS_READ) {
      progress.emit(state.rowsById(turnRows.subarray(at, at + MAX_ROWS_READ)));
      summary.rowsScanned = Math.round((structureMax * Math.min(turnRows.length, at + MAX_ROWS_READ)) / turnRows.length);
      options.onProgress?.(summary.rowsScanned, structureMax);
      await yieldToLoop();
    }
    if (!progress.stopped()) summary.rowsScanned = structureMax;
  } else if (structured) {
    for (let after = 0; after < structureMax && !progress.stopped();) {
      const t0 = performance.now();
      // Each window starts at the next row there is: windows of ids from 0 took time by the largest id, not by the
      // rows (4 rows, one of id 1e10: 3 s; one near 2^53 never ended). On a dense file the next row is `after + 1`.
      const next = state.nextStructureId(after);
      if (next === null) {
        summary.rowsScanned += structureMax - after;
        break;
      }
      const start = Math.max(after, next - 1);
      // Past 2^53 a double's steps outgrow a batch (`start + rows` would be `start`): the rest is then one window.
      const to = start + batches.rows > start ? Math.min(structureMax, start + batches.rows) : structureMax;
      const reached = state.structureBatch(after, to, progress);
      summary.rowsScanned += reached - after;
      after = reached;
      options.onProgress?.(summary.rowsScanned, structureMax);
      batches.adapt(performance.now() - t0);
      await yieldToLoop();
    }
  }
  await searchPlain(db, state, progress, options, structureMax, batches);
  return progress.finish(() => countMessages(db, options.sessionId));
}

/**
 * The items a search of `sessionId` (or of every session) covers, each message once however many branches share it:
 * SQLite counts an index's entries page by page (0.1 ms for the 404,000 messages of the bench's file A; one session by
 * the (session_id, id) index).
 */
function countMessages(db: SessionDatabase, sessionId: string | undefined): number {
  return db.readWith((ctx) => {
    const messages = quoteIdentifier(ctx.tables.messages);
    const row =
      sessionId === undefined
        ? ctx.stmt(`SELECT count(*) AS n FROM ${messages}`).get<{ n: number }>()
        : ctx.stmt(`SELECT count(*) AS n FROM ${messages} WHERE session_id = ?`).get<{ n: number }>(sessionId);
    return Number(row?.n ?? 0);
  });
}

/** Rows per batch: the next batch aims at `TARGET_BATCH_MS` from the time the last one took. */
class BatchSize {
  rows = FIRST_BATCH_ROWS;

  adapt(ms: number): void {
    this.rows = Math.max(
      FIRST_BATCH_ROWS,
      Math.min(MAX_BATCH_ROWS, Math.round(this.rows * Math.min(4, TARGET_BATCH_MS / Math.max(ms, 1)))),
    );
  }
}

/**
 * The plain sessions' pass, after the structured one, so listing them never delays the first hits. `structureTotal`:
 * the structured pass's rows, the start of the progress's total (an estimate: the plain pass reads only the plain
 * sessions' rows, which are not known before). `listed`: the plain sessions, when they were listed already.
 */
async function searchPlain(
  db: SessionDatabase,
  state: ScanState,
  progress: ScanProgress,
  options: SearchOptions,
  structureTotal: number,
  batches: BatchSize,
  listed?: string[],
): Promise<void> {
  const summary = progress.summary;
  if (progress.stopped()) return;
  const plain = (listed ?? state.plainSessions()).filter((id) => options.sessionId === undefined || id === options.sessionId);
  if (plain.length === 0) return;
  const total =
    structureTotal +
    Number(
      db.readWith(
        (ctx) => ctx.stmt(`SELECT max(id) AS m FROM ${quoteIdentifier(ctx.tables.messages)}`).get<{ m: number | null }>()?.m ?? 0,
      ),
    );
  for (const sessionId of plain) {
    let after = 0;
    let turn = 0;
    while (!progress.stopped()) {
      const t0 = performance.now();
      const page = state.plainBatch(sessionId, after, turn, batches.rows);
      summary.rowsScanned += page.rows;
      progress.emit(page.hits);
      options.onProgress?.(summary.rowsScanned, total);
      batches.adapt(performance.now() - t0);
      if (page.next === null) break;
      after = page.next;
      turn = page.turn;
      await yieldToLoop();
    }
  }
}

/**
 * What the scan knows of each message (one byte per message id, see `ScanState.verdicts`): not judged yet; its text
 * fails the prefilter or the exact test (`never`: no row of it can match); it passed the prefilter (`candidate`);
 * reported; or it failed only for its tool name (`namedOnly`: a row with a stored tool name, or its call learned later,
 * may still match).
 */
const UNJUDGED = 0;
const NEVER = 1;
const CANDIDATE = 2;
const REPORTED = 3;
const NAMED_ONLY = 4;
/**
 * Verdicts are kept for files with at most this many messages (16 MB); a larger file (tens of GB) has each structure
 * row tested on its message's text, copies included, as before verdicts were kept.
 */
export const MAX_VERDICT_MESSAGES = 16_000_000;

/** What the scan remembers between batches: statements' SQL, branch trees, reported messages and known call names. */
class ScanState {
  /** The folded text when the raw-text check applies to it (see `rawCouldMatch`), else null. */
  private readonly rawNeedle: string | null;
  private readonly structureSql: string;
  private readonly plainSql: string;
  private readonly params: unknown[];
  private readonly plainParams: unknown[];
  /** The connection's kept facts (`keptScanFacts`), asked for at the first tree this scan needs. */
  private facts: KeptScanFacts | undefined;
  /** Messages already reported, per session (a shared message is reported at its first structure row). */
  private readonly reported = new Map<string, Set<number>>();
  private readonly tester: HitTester;
  private readonly reviewed: boolean;
  private readonly judgeSql: string;
  private readonly turnIdsSql: string;
  private readonly turnZeroIdsSql: string;
  private readonly turnRowsSql: string;
  private readonly branchTurnRowsSql: string;
  private readonly byIdSql: string;
  private readonly hasTools: boolean;
  private readonly judgeByMessages: boolean;
  /** The prefilter is '1': every row the type condition lets through is a candidate, so nothing is judged first. */
  private readonly typeDecides: boolean;
  private readonly largestRefSql: string;
  private readonly nextIdSql: string;
  private readonly judgeMessagesSql: string;
  /** `judgeMessages`: every message up to this id is judged. */
  private judgedTo = 0;
  /**
   * The verdict on each message (index: id − 1), judged batch by batch as the scan meets it (`judgeSql`), each
   * message's text tested once by the prefilter; the structure rows then read only the messages still in question.
   * A message shared by n branches has n structure rows: this is what keeps the scan from testing its text n times
   * (3.4 rows a message on a 100,000-turn file whose five branches ran 1,000 turns each after forks late in main).
   */
  private verdicts = new Uint8Array(0);
  /** How many messages are `candidate` or `namedOnly`: while none is, the rows query can find nothing. */
  private open = 0;
  /** Call ids of outputs judged `namedOnly`, hashed (see `CallIdFilter`): learning one of them judges those again. */
  private readonly namedOnlyCalls: CallIdFilter | null;
  private rejudge = false;
  /** Hits of outputs whose call is still to be named (`nameOutputs`), with the call id each answers. */
  private unnamed: { hit: SearchHit; callId: string }[] = [];
  /** Per session, which branch ran a turn and which share it (`ForkAnswers`). */
  private readonly forkAnswers = new Map<string, ForkAnswers>();

  constructor(
    private readonly db: SessionDatabase,
    query: SearchQuery,
    private readonly sessionId?: string,
    turns?: TurnSet,
  ) {
    this.tester = new HitTester(query, turns);
    this.reviewed = query.review !== undefined;
    this.namedOnlyCalls = query.tools.length > 0 ? new CallIdFilter() : null;
    this.tester.onLearn = (callId) => {
      if (this.namedOnlyCalls?.mayHold(callId)) this.rejudgeNamedOnly();
    };
    const needle = foldForSearch(query.text);
    // Only a text-only query can reject on the text alone: with filters, a non-matching row may still name a tool.
    this.rawNeedle = isRawSearchable(needle) && query.tools.length === 0 ? needle : null;
    const t = db.tables;
    const messages = quoteIdentifier(t.messages);
    // Plain sessions have no structure row to say a message's type, so their filter tests the role in the text.
    const plainFilter = sqlPrefilter(query, 'm.message_data');
    // Tested on the structure row first: a row it rejects is never joined to its message (the planner checks terms on
    // `s` before the lookup into `m`). A tool filter's own (`toolTypeCondition`) keeps the learner rows, its calls.
    const types = query.tools.length === 0 ? structureTypeCondition(query, 's.message_type') : toolTypeCondition(query, 's.message_type');
    // Where the structure row's type decides the role, testing the role in the text too only reads it for nothing.
    const filter = sqlPrefilter(query, 'm.message_data', {
      rolesByType: query.tools.length === 0 && types !== null && (rolesDecidedByType(query) || reviewOnly(query)),
      typeCol: 's.message_type',
    });
    this.params = filter.params;
    this.plainParams = plainFilter.params;
    // A rowid range of message_structure; the join is a primary-key lookup. A row is kept or dropped on its message's
    // verdict, tested on the structure row alone before the join, so a row whose message cannot match (a branch's copy
    // of a turn already judged, most rows of a file with long branches) costs no read of its text. A message id past
    // the verdicts (one written after the scan started, e.g. by a history rewrite) is tested on its text, as every
    // row was before verdicts were kept. Parameters: the range, the session, the verdicts' length, the verdicts, their
    // length again, the prefilter's.
    // `+s.session_id`: the rowid range must drive the read. Given an index on the session, the planner read one
    // session's rows by branch name, so a turn shared with a branch named before its own was reported under the copy.
    const session = sessionId === undefined ? '' : ' AND +s.session_id = ?';
    // A prefilter of '1' (the structure row's type said it all: role:user, review filters alone) has nothing to judge:
    // a judging pass would only mark every message the type lets through a candidate, in a walk of the structure rows
    // as long as the rows query's own (a third of role:user's CPU on file A). The rows query takes those messages
    // unjudged instead; the exact test then judges each as it does a candidate.
    this.typeDecides = filter.sql === '1';
    const unjudged = this.typeDecides ? ` WHEN x'0${UNJUDGED}' THEN 1` : '';
    const rows = `FROM message_structure s JOIN ${messages} m ON m.id = s.message_id AND m.session_id = s.session_id
      WHERE s.id > ? AND s.id <= ?${session}${types ? ` AND ${types}` : ''}`;
    // The columns in `StructureRow`'s order (read as arrays), here and in `byIdSql`.
    this.structureSql = `SELECT s.id AS sid, s.session_id, s.branch_id, s.message_id, s.sequence_number, s.message_type,
        s.tool_name, s.user_turn_number AS turn, m.message_data AS data
      ${rows}
        AND (s.message_id > ? OR CASE substr(?, s.message_id, 1) WHEN x'0${CANDIDATE}' THEN 1
          WHEN x'0${NAMED_ONLY}' THEN s.tool_name IS NOT NULL${unjudged} ELSE 0 END)
        AND (s.message_id <= ? OR ${filter.sql})
      ORDER BY s.id LIMIT ?`;
    // The same range's rows whose message is not judged yet, each message's text tested once by the prefilter: its id
    // if it passes, minus its id if not, in one string (a row each would cost more than the test). Parameters: the
    // verdicts' length, the prefilter's, the verdicts' length, the range, the session, the verdicts' length, the
    // verdicts.
    // Also whether a row of the range names a message past the verdicts (`beyond`): the rows query must run for it.
    // A prefilter of '1' (the structure row's type said it all: role:user, review filters alone) needs no message:
    // the judging then walks the structure rows alone, and the rows query reads each message once (a message that is
    // not there is only a candidate the rows query does not find).
    const judged =
      filter.sql === '1' ? `FROM message_structure s WHERE s.id > ? AND s.id <= ?${session}${types ? ` AND ${types}` : ''}` : rows;
    this.judgeSql = `SELECT group_concat(CASE WHEN s.message_id > ? THEN NULL WHEN ${filter.sql} THEN s.message_id
        ELSE -s.message_id END) AS ids, max(s.message_id > ?) AS beyond
      ${judged} AND (s.message_id > ? OR substr(?, s.message_id, 1) = x'0${UNJUDGED}')`;
    // The review filters' turns (`turnRowIds`): a turn's structure rows by the (session, branch, turn) index, those
    // whose type can match; turn 0 is also the rows without a turn number (the scan counts them as turn 0).
    const turnIds = `SELECT s.id FROM message_structure s
      WHERE s.session_id = ? AND s.branch_id = ? AND %TURN% AND s.id <= ?${types ? ` AND ${types}` : ''}`;
    // A branch's turns in one statement (a JSON array of them): one statement per turn cost a third of a search naming
    // 100 turns on the bench's file A.
    this.turnIdsSql = turnIds.replace('%TURN%', 's.user_turn_number IN (SELECT value FROM json_each(?))');
    this.turnZeroIdsSql = turnIds.replace('%TURN%', '(s.user_turn_number = ? OR s.user_turn_number IS NULL)');
    // The turns' rows with their messages where the prefilter lets them through, in one statement, one more than a read's
    // rows at most: every (session, branch, turn) as a JSON array of them, each seeking idx_structure_turn (a statement per
    // branch cost a search naming 100 turns of as many sessions, the bench's file B, 3.7 ms against the floor's 0.6), or,
    // for the turns of one branch, their numbers (the triples' `json_extract`s cost a fifth more on the bench's file A).
    // Not `ORDER BY s.id`: SQLite then walked the whole table in rowid order (35 ms on file A, against 0.2 ms seeking each
    // turn), and a sort kept to the `LIMIT` cost a third more than the rows. The session and branch are set by
    // `turnRows` (from the place's index in the array): selected, they were two strings made per row. Named apart, as
    // `arrays` asks (on node:sqlite before Node 22.16 two columns named NULL were one, and the rest moved up).
    const turnRow = `s.id AS sid, %PLACE% AS place, NULL AS branch_id, s.message_id, s.sequence_number, s.message_type,
        s.tool_name, s.user_turn_number AS turn, m.message_data AS data`;
    const turnWhere = `${types ? ` AND ${types}` : ''} AND ${filter.sql}
      LIMIT ?`;
    this.turnRowsSql = `SELECT ${turnRow.replace('%PLACE%', 'j.key')}
      FROM json_each(?) j
        JOIN message_structure s ON s.session_id = json_extract(j.value, '$[0]') AND s.branch_id = json_extract(j.value, '$[1]')
          AND s.user_turn_number = json_extract(j.value, '$[2]')
        JOIN ${messages} m ON m.id = s.message_id AND m.session_id = s.session_id
      WHERE 1${turnWhere}`;
    this.branchTurnRowsSql = `SELECT ${turnRow.replace('%PLACE%', '0')}
      FROM message_structure s JOIN ${messages} m ON m.id = s.message_id AND m.session_id = s.session_id
      WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number IN (SELECT value FROM json_each(?))${turnWhere}`;
    // Those rows, a chunk of ids at a time, with their messages where the prefilter lets them through.
    this.byIdSql = `SELECT s.id AS sid, s.session_id, s.branch_id, s.message_id, s.sequence_number, s.message_type,
        s.tool_name, s.user_turn_number AS turn, m.message_data AS data
      FROM message_structure s JOIN ${messages} m ON m.id = s.message_id AND m.session_id = s.session_id
      WHERE s.id IN (SELECT value FROM json_each(?)) AND ${filter.sql}
      ORDER BY s.id`;
    this.hasTools = query.tools.length > 0;
    // Judging by messages (`judgeMessages`): only where no structure condition narrows the rows, and verdicts are kept.
    this.judgeByMessages = types === null && !this.hasTools;
    // A seek of the rowid, once a batch. Of any session: the windows are of the table's rows, as the scan's.
    this.nextIdSql = 'SELECT min(id) AS m FROM message_structure WHERE id > ?';
    this.largestRefSql = `SELECT max(s.message_id) AS m FROM message_structure s WHERE s.id > ? AND s.id <= ?${session}`;
    this.judgeMessagesSql = `SELECT group_concat(CASE WHEN ${filter.sql} THEN m.id ELSE -m.id END) AS ids
      FROM ${messages} m WHERE m.id > ? AND m.id <= ?${sessionId === undefined ? '' : ' AND m.session_id = ?'}`;
    // A plain session's rows in id order (the (session_id, id) index), each with whether it opens a turn; only rows
    // that pass the prefilter carry their data.
    // CASE, not `json_valid(…) AND json_extract(…)`: SQLite does not promise to skip an AND's right side, and did not
    // (3.53: one malformed row failed the whole search with "malformed JSON").
    this.plainSql = `SELECT id, CASE WHEN ${plainFilter.sql} THEN message_data END AS data,
        CASE WHEN json_valid(message_data) THEN json_extract(message_data, '$.role') = 'user' ELSE 0 END AS is_user
      FROM ${messages} m WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?`;
  }

  /**
   * The turns `turns` allows, by session and branch, when it is a list of turns (`only`) and the query names no tool;
   * else null (a scan of every row). A tool filter needs every call before an output to name it, so it always scans.
   * Keys are turned back into (session, branch, turn); a key that does not split so (an id holding U+0000) makes it a
   * scan too. Worked out once per set: the id path asks again when the one-read path found more rows than a read.
   */
  private turnPlaces(turns: TurnSet | undefined): Map<string, Map<string, number[]>> | null {
    if (this.places === undefined || this.places.turns !== turns) this.places = { turns, places: this.placesOf(turns) };
    return this.places.places;
  }

  private places: { turns: TurnSet | undefined; places: Map<string, Map<string, number[]>> | null } | undefined;

  private placesOf(turns: TurnSet | undefined): Map<string, Map<string, number[]>> | null {
    if (turns?.mode !== 'only' || this.hasTools) return null;
    const places = new Map<string, Map<string, number[]>>();
    for (const key of turns.keys) {
      const parts = key.split('\u0000');
      const turn = Number(parts[2]);
      if (parts.length !== 3 || !Number.isSafeInteger(turn)) return null;
      if (this.sessionId !== undefined && parts[0] !== this.sessionId) continue;
      let branches = places.get(parts[0]!);
      if (!branches) places.set(parts[0]!, (branches = new Map()));
      let list = branches.get(parts[1]!);
      if (!list) branches.set(parts[1]!, (list = []));
      list.push(turn);
    }
    return places;
  }

  /**
   * The rows of the turns `turns` allows (`turnPlaces`) with their messages, in structure order, read in one snapshot
   * (one statement): when they are at most `MAX_ROWS_READ` and no turn is 0; else null, and the scan reads their ids
   * first (`turnRowIds`). With them, from the same read, the largest structure id (the progress's total) and the plain
   * sessions (`plainSessions`, kept since the last commit). Reading the ids, then the rows by id, cost a search naming
   * 100 turns of the bench's file A a third more.
   */
  turnRows(turns: TurnSet | undefined): { rows: StructureRow[]; structureMax: number; plain: string[] } | null {
    const places = this.turnPlaces(turns);
    if (!places) return null;
    // Each (session, branch, turn) once: a key given twice names its rows once, as in the id path.
    const triples: [string, string, number][] = [];
    for (const [sessionId, branches] of places) {
      for (const [branchId, list] of branches) {
        if (list.includes(0)) return null;
        for (const turn of new Set(list)) triples.push([sessionId, branchId, turn]);
      }
    }
    const facts = (this.facts ??= keptScanFacts(this.db));
    const oneBranch = triples.every((t) => t[0] === triples[0]?.[0] && t[1] === triples[0][1]);
    return this.db.readWith((ctx) => {
      const rows = oneBranch
        ? ctx
            .stmt(this.branchTurnRowsSql)
            .arrays<StructureRow>(
              triples[0]?.[0] ?? '',
              triples[0]?.[1] ?? '',
              JSON.stringify(triples.map((t) => t[2])),
              ...(this.params as never[]),
              MAX_ROWS_READ + 1,
            )
        : ctx.stmt(this.turnRowsSql).arrays<StructureRow>(JSON.stringify(triples), ...(this.params as never[]), MAX_ROWS_READ + 1);
      if (rows.length > MAX_ROWS_READ) return null;
      for (const r of rows) {
        const place = triples[Number(r[1])]!;
        r[1] = place[0];
        r[2] = place[1];
      }
      return {
        rows: rows.sort((x, y) => Number(x[0]) - Number(y[0])),
        structureMax: Number(ctx.stmt('SELECT max(id) AS m FROM message_structure').get<{ m: number | null }>()?.m ?? 0),
        // Kept since the last commit, else listed in this snapshot.
        plain: (facts.plainSessions ??= this.plainSessionsIn(ctx)),
      };
    });
  }

  /**
   * The structure rows (ids, in order) of the turns `turns` allows (`turnPlaces`), or null. Only the rows' ids are
   * held (8 bytes each), and only those whose type can match.
   */
  turnRowIds(turns: TurnSet | undefined, structureMax: number): Float64Array | null {
    const places = this.turnPlaces(turns);
    if (!places) return null;
    const ids = this.db.readWith((ctx) => {
      const out: number[] = [];
      for (const [sessionId, branches] of places) {
        for (const [branchId, list] of branches) {
          const found = ctx
            .stmt(this.turnIdsSql)
            .column<number>(sessionId, branchId, JSON.stringify(list.filter((t) => t !== 0)), structureMax);
          if (list.includes(0)) found.push(...ctx.stmt(this.turnZeroIdsSql).column<number>(sessionId, branchId, 0, structureMax));
          for (const id of found) out.push(Number(id));
        }
      }
      return out;
    });
    const sorted = Float64Array.from(ids).sort();
    // A key given twice names its rows twice.
    return sorted.filter((id, i) => i === 0 || sorted[i - 1] !== id);
  }

  /** The smallest structure row id past `after` (a seek of the rowid), or null when there is none. */
  nextStructureId(after: number): number | null {
    const m = this.db.readWith((ctx) => ctx.stmt(this.nextIdSql).get<{ m: number | null }>(after)?.m);
    return m === null || m === undefined ? null : Number(m);
  }

  /** The hits among `rows` (structure rows with their messages, in order). */
  hitsOf(rows: readonly StructureRow[]): SearchHit[] {
    const hits: SearchHit[] = [];
    for (const r of rows) this.structureRow(r, hits);
    this.nameOutputs();
    return hits;
  }

  /** The hits among the structure rows `ids` (ascending), read with their messages in one read. */
  rowsById(ids: Float64Array): SearchHit[] {
    return this.hitsOf(
      this.db.readWith((ctx) => ctx.stmt(this.byIdSql).arrays<StructureRow>(JSON.stringify(Array.from(ids)), ...(this.params as never[]))),
    );
  }

  /** Sessions with messages but no structure rows, in the order they were first written. */
  plainSessions(): string[] {
    // Asked again, not the scan's first answer: a long scan may have seen a commit since it began.
    const facts = keptScanFacts(this.db);
    return (facts.plainSessions ??= this.db.readWith((ctx) => this.plainSessionsIn(ctx)));
  }

  private plainSessionsIn(ctx: QueryContext): string[] {
    const messages = quoteIdentifier(ctx.tables.messages);
    const structureless = ctx.tables.messageStructure
      ? ' WHERE NOT EXISTS (SELECT 1 FROM message_structure s WHERE s.session_id = d.session_id)'
      : '';
    // The sessions one index seek at a time (the next id after the last), not a pass over every message's entry:
    // GROUP BY cost 50 ms on the bench's file A, which a search naming a few turns otherwise reads in 2 ms.
    return ctx
      .stmt(
        `WITH RECURSIVE ids(session_id) AS (
           SELECT (SELECT min(session_id) FROM ${messages})
           UNION ALL
           SELECT (SELECT min(session_id) FROM ${messages} WHERE session_id > ids.session_id) FROM ids WHERE ids.session_id IS NOT NULL)
         SELECT session_id FROM (SELECT session_id, (SELECT min(id) FROM ${messages} m WHERE m.session_id = ids.session_id) AS first
           FROM ids WHERE session_id IS NOT NULL) d${structureless} ORDER BY first`,
      )
      .all<{ session_id: string }>()
      .map((r) => r.session_id);
  }

  /** Keeps a verdict per message for a file whose largest message id is `messageMax` (see `MAX_VERDICT_MESSAGES`). */
  keepVerdicts(messageMax: number): void {
    if (messageMax > 0 && messageMax <= MAX_VERDICT_MESSAGES) this.verdicts = new Uint8Array(messageMax);
  }

  keepsVerdicts(): boolean {
    return this.verdicts.length > 0;
  }

  /**
   * Takes the index's verdicts before the scan judges anything: every message up to `ruled.through` is `never` but
   * those it keeps (candidates, or unjudged for a query with text) and those only a structure row's tool name can make
   * match (`namedOnly`).
   */
  ruleOut(ruled: RuledOut, textless: boolean): void {
    const v = this.verdicts;
    const upTo = Math.min(ruled.through, v.length);
    v.fill(NEVER, 0, upTo);
    // Without text, what the prefilter would test is what the index said (the tool, the failure): a kept message is
    // a candidate, read once by the rows query, not first by the judging pass. With text, the prefilter's test of it
    // still spares reading most of them.
    const kept = textless ? CANDIDATE : UNJUDGED;
    // `namedOnly` first: a message in both lists is kept.
    for (const id of ruled.namedOnly) if (id >= 1 && id <= upTo) this.setVerdict(id - 1, NAMED_ONLY);
    for (const id of ruled.keep) if (id >= 1 && id <= upTo) this.setVerdict(id - 1, kept);
  }

  /**
   * Scans the structure rows in (after, to], handing each read's hits to `progress` as soon as they are tested (a
   * batch of a common word holds thousands: kept until the batch ended, they were most of the scan's memory), and
   * stops early when `progress` says so (the hit limit, a cancel). Returns the last structure id it covered.
   */
  structureBatch(after: number, to: number, progress: ScanProgress): number {
    const session = this.sessionId === undefined ? [] : [this.sessionId];
    for (let from = after; from < to;) {
      if (from > after && progress.stopped()) return from;
      const hits: SearchHit[] = [];
      const rows = this.db.readWith((ctx) => {
        const v = this.verdicts;
        const range = [from, to, ...session] as never[];
        if (this.typeDecides && !this.judgeByMessages)
          return ctx
            .stmt(this.structureSql)
            .arrays<StructureRow>(...range, v.length, v, v.length, ...(this.params as never[]), MAX_ROWS_READ);
        const judged = this.judgeByMessages
          ? this.judgeMessages(ctx, range)
          : ctx
              .stmt(this.judgeSql)
              .get<{ ids: string | null; beyond: number | null }>(v.length, ...(this.params as never[]), v.length, ...range, v.length, v);
        for (const text of judged?.ids ? judged.ids.split(',') : []) {
          const id = Number(text);
          const i = Math.abs(id) - 1;
          // A message the exact test judged already (a copy of it earlier in this range) keeps that verdict.
          if (v[i] === UNJUDGED) this.setVerdict(i, id > 0 ? CANDIDATE : NEVER);
        }
        // No message in question anywhere (a rare word, most of an is:failed scan): no row of the range can be a hit.
        if (this.open === 0 && !judged?.beyond) return [];
        return ctx
          .stmt(this.structureSql)
          .arrays<StructureRow>(...range, v.length, v, v.length, ...(this.params as never[]), MAX_ROWS_READ);
      });
      // A full read stops short of the range: the rest is read next (a common word's rows carry their text).
      const last = rows[rows.length - 1];
      from = rows.length === MAX_ROWS_READ && last ? Number(last[0]) : to;
      for (const r of rows) {
        this.structureRow(r, hits);
        // A call was learned whose id an output judged `namedOnly` may hold: the rest of the batch is read again, so
        // the copies the verdicts dropped are tested as they were before.
        if (this.rejudge) {
          this.rejudge = false;
          from = Number(r[0]);
          break;
        }
      }
      this.nameOutputs();
      progress.emit(hits);
    }
    return to;
  }

  private structureRow(r: StructureRow, hits: SearchHit[]): void {
    const [, sessionId, branchId, rowMessageId, sequenceNumber, messageType, toolName, rowTurn, data] = r;
    const messageId = Number(rowMessageId);
    if (this.isReported(sessionId, messageId)) return;
    const turn = rowTurn === null ? 0 : Number(rowTurn);
    // A review filter names a shared turn by the branch that ran it: a copy's row (which the first row, of that
    // branch, failed) must not match in its place.
    if (this.reviewed && this.forks(sessionId).origin(branchId, turn) !== branchId) return;
    // A candidate passed the SQL prefilter, which holds the same needle test (SQLite's LIKE folds ASCII case): testing
    // its raw text again only lower-cased a copy of each hit's row (most of a common word's rows are hits).
    if (this.rawNeedle !== null && typeof data === 'string' && !this.isCandidate(messageId) && !rawCouldMatch(data, this.rawNeedle))
      return this.judge(messageId, NEVER);
    const decoded = decodeMessageData(data);
    if (!decoded.ok) return this.judge(messageId, NEVER);
    const hit = this.test(sessionId, decoded.value, messageId, toolName, () => ({
      branchId,
      turn,
      sequenceNumber: Number(sequenceNumber),
      itemType: displayType(messageType),
    }));
    if (!hit) {
      const why = this.tester.lastRejection;
      if (why === 'item') this.judge(messageId, NEVER);
      else if (why === 'name') {
        this.judge(messageId, NAMED_ONLY);
        if (this.tester.lastCallId !== null) this.namedOnlyCalls?.add(this.tester.lastCallId);
      }
      return;
    }
    if (messageId < 1 || messageId > this.verdicts.length) this.reportedIn(sessionId).add(messageId);
    this.judge(messageId, REPORTED);
    hit.sharedWith = this.sharedWith(sessionId, branchId, turn);
    hits.push(hit);
  }

  /**
   * Names the outputs among the hits just tested by their calls (`callName`), all in one read: one read per hit (a
   * check of the file and a transaction each) cost a third of a common word's scan, whose hits are a third outputs.
   */
  private nameOutputs(): void {
    if (this.unnamed.length === 0) return;
    const unnamed = this.unnamed;
    this.unnamed = [];
    this.db.readWith((ctx) => {
      const before = this.rowsBefore(ctx, unnamed);
      for (const u of unnamed) {
        const { sessionId, messageId } = u.hit;
        const row = before.get(messageId - 1);
        // The row just before, of the same session, holds the call id: it is the nearest earlier row of the session
        // that does, as `callName` would find it (most outputs follow their call). Otherwise `callName` looks further
        // back.
        u.hit.toolName =
          row !== undefined && row[0] === sessionId
            ? this.nameIfCall(row[1], u.callId)
            : this.callName(ctx, sessionId, messageId, u.callId);
      }
    });
  }

  private judge(messageId: number, verdict: number): void {
    if (messageId >= 1 && messageId <= this.verdicts.length) this.setVerdict(messageId - 1, verdict);
  }

  /**
   * The judging of a query the structure row's type cannot narrow (text alone, or with a role the type does not say):
   * the messages themselves, in id order, from the last one judged to the largest this range names, each tested once
   * by the prefilter in one pass of the messages table (the floor's own read), instead of through every structure row
   * and a lookup of its message. A range naming only messages judged already (a branch's copies) judges nothing.
   * Messages past the verdicts are left to the rows query (`beyond`), as in `judgeSql`. Message ids are AUTOINCREMENT
   * (the format's DDL), so one written after the watermark passed has a larger id than any judged.
   */
  private judgeMessages(ctx: QueryContext, range: never[]): { ids: string | null; beyond: number | null } {
    const v = this.verdicts;
    const largest = Number(ctx.stmt(this.largestRefSql).get<{ m: number | null }>(...range)?.m ?? 0);
    const upTo = Math.min(largest, v.length);
    let ids: string | null = null;
    if (upTo > this.judgedTo) {
      const session = this.sessionId === undefined ? [] : [this.sessionId];
      ids =
        ctx.stmt(this.judgeMessagesSql).get<{ ids: string | null }>(...(this.params as never[]), this.judgedTo, upTo, ...session)?.ids ??
        null;
      this.judgedTo = upTo;
    }
    return { ids, beyond: largest > v.length ? 1 : 0 };
  }

  /** Sets a verdict, keeping `open` (how many messages are `candidate` or `namedOnly`) up to date. */
  private setVerdict(index: number, verdict: number): void {
    const v = this.verdicts;
    const wasOpen = v[index] === CANDIDATE || v[index] === NAMED_ONLY;
    const isOpen = verdict === CANDIDATE || verdict === NAMED_ONLY;
    this.open += (isOpen ? 1 : 0) - (wasOpen ? 1 : 0);
    v[index] = verdict;
  }

  /** Every output judged for its tool name alone is a candidate again (a call it may answer was just learned). */
  private rejudgeNamedOnly(): void {
    const v = this.verdicts;
    for (let i = 0; i < v.length; i++) if (v[i] === NAMED_ONLY) v[i] = CANDIDATE;
    this.namedOnlyCalls?.clear();
    this.rejudge = true;
  }

  plainBatch(
    sessionId: string,
    after: number,
    turn: number,
    limit: number,
  ): { hits: SearchHit[]; rows: number; next: number | null; turn: number } {
    const rows = this.db.readWith((ctx) =>
      ctx.stmt(this.plainSql).all<PlainRow>(...(this.plainParams as never[]), sessionId, after, limit + 1),
    );
    const page = rows.slice(0, limit);
    const hits: SearchHit[] = [];
    for (const r of page) {
      if (r.is_user) turn++;
      if (r.data === null || r.data === undefined) continue;
      if (this.rawNeedle !== null && typeof r.data === 'string' && !rawCouldMatch(r.data, this.rawNeedle)) continue;
      const decoded = decodeMessageData(r.data);
      if (!decoded.ok) continue;
      const id = Number(r.id);
      const hit = this.test(sessionId, decoded.value, id, null, () => ({
        branchId: PLAIN_BRANCH_ID,
        turn,
        sequenceNumber: id,
        itemType: displayType(messageTypeOf(decoded.value)),
      }));
      if (hit) hits.push(hit);
    }
    this.nameOutputs();
    const last = page[page.length - 1];
    return { hits, rows: page.length, next: rows.length > limit && last ? Number(last.id) : null, turn };
  }

  /** The hit for `item`, or null; an output it cannot name yet is named by `nameOutputs` before the hit is sent. */
  private test(
    sessionId: string,
    item: unknown,
    messageId: number,
    storedToolName: string | null,
    where: () => HitPlace,
  ): SearchHit | null {
    let callId: string | null = null;
    const hit = this.tester.test(sessionId, item, messageId, storedToolName, where, (id) => {
      callId = id;
      return null;
    });
    if (hit && callId !== null) this.unnamed.push({ hit, callId });
    return hit;
  }

  /** Whether the prefilter let the message through and no row of it was tested yet. */
  private isCandidate(messageId: number): boolean {
    return messageId >= 1 && messageId <= this.verdicts.length && this.verdicts[messageId - 1] === CANDIDATE;
  }

  /**
   * Whether the message was reported already: its verdict says so, or (a message past the verdicts) the session's set.
   * Message ids are the messages table's, and a structure row only joins a message of its own session.
   */
  private isReported(sessionId: string, messageId: number): boolean {
    if (messageId >= 1 && messageId <= this.verdicts.length) return this.verdicts[messageId - 1] === REPORTED;
    return this.reported.get(sessionId)?.has(messageId) ?? false;
  }

  private reportedIn(sessionId: string): Set<number> {
    let set = this.reported.get(sessionId);
    if (!set) this.reported.set(sessionId, (set = new Set()));
    return set;
  }

  private tree(sessionId: string): ForkFacts[] {
    const trees = (this.facts ??= keptScanFacts(this.db)).trees;
    let tree = trees.get(sessionId);
    if (!tree) trees.set(sessionId, (tree = this.db.readWith((ctx) => readBranchForks(ctx, sessionId))));
    return tree;
  }

  /** The branches that share `turn` of `branchId` (those whose copy of the turn came from it). */
  private sharedWith(sessionId: string, branchId: string, turn: number): string[] {
    return [...this.forks(sessionId).sharedWith(branchId, turn)];
  }

  private forks(sessionId: string): ForkAnswers {
    let forks = this.forkAnswers.get(sessionId);
    if (!forks) this.forkAnswers.set(sessionId, (forks = new ForkAnswers(this.tree(sessionId))));
    return forks;
  }

  /** The name of the call an output answers, for showing it: the nearest earlier row of the session with its call id. */
  private callName(ctx: QueryContext, sessionId: string, beforeId: number, callId: string): string | null {
    const row = ctx
      .stmt(
        `SELECT message_data FROM ${quoteIdentifier(ctx.tables.messages)}
           WHERE session_id = ? AND id < ? AND instr(message_data, ?) > 0 ORDER BY id DESC LIMIT 1`,
      )
      .get<{ message_data: unknown }>(sessionId, beforeId, callId);
    return row ? this.nameIfCall(row.message_data, callId) : null;
  }

  /** The tool name of the item `data` holds when it is the call `callId` names, else null. */
  private nameIfCall(data: unknown, callId: string): string | null {
    const decoded = decodeMessageData(data);
    if (!decoded.ok) return null;
    const facts = itemFacts(decoded.value);
    return facts.callId === callId ? facts.toolName : null;
  }

  /**
   * The rows just before the outputs `unnamed` that hold their output's call id (`instr`, as `callName` tests it), with
   * their session and data, by id, in one read: a statement per output cost an eighth of a common word's scan on the
   * bench's file A, whose hits are a third outputs. Only rows holding the id come back (mostly the calls, small), so
   * the read holds no more text than the outputs' own.
   */
  private rowsBefore(ctx: QueryContext, unnamed: readonly { hit: SearchHit; callId: string }[]): Map<number, [unknown, unknown]> {
    const pairs = unnamed.map((u) => [u.hit.messageId - 1, u.callId]);
    const rows = ctx
      .stmt(
        `SELECT m.id, m.session_id, m.message_data FROM json_each(?) j
           JOIN ${quoteIdentifier(ctx.tables.messages)} m ON m.id = json_extract(j.value, '$[0]')
           WHERE instr(m.message_data, json_extract(j.value, '$[1]')) > 0`,
      )
      .arrays<[number, unknown, unknown]>(JSON.stringify(pairs));
    return new Map(rows.map((r) => [Number(r[0]), [r[1], r[2]]]));
  }
}

/**
 * `turnOrigin` for one session's tree, and the branches sharing a turn, each worked out once per branch and stretch of
 * turns: the answers change only at a fork turn (`turnOrigin` compares the turn with fork turns alone), and worked out
 * per hit they cost a map of the tree for each branch, a tenth of a hit-heavy scan.
 */
class ForkAnswers {
  /** The distinct fork turns, ascending: a turn's stretch is how many are at or below it. */
  private readonly forkTurns: number[];
  private readonly origins = new Map<string, string[]>();
  private readonly shared = new Map<string, string[][]>();

  constructor(private readonly tree: ForkFacts[]) {
    this.forkTurns = [...new Set(tree.flatMap((b) => (b.forkTurn === null ? [] : [b.forkTurn])))].sort((a, b) => a - b);
  }

  origin(branchId: string, turn: number): string {
    const stretch = this.stretch(turn);
    let byStretch = this.origins.get(branchId);
    if (!byStretch) this.origins.set(branchId, (byStretch = []));
    return (byStretch[stretch] ??= turnOrigin(this.tree, branchId, turn));
  }

  sharedWith(branchId: string, turn: number): readonly string[] {
    if (this.tree.length < 2) return [];
    const stretch = this.stretch(turn);
    let byStretch = this.shared.get(branchId);
    if (!byStretch) this.shared.set(branchId, (byStretch = []));
    return (byStretch[stretch] ??= this.tree
      .filter((b) => b.branchId !== branchId && this.origin(b.branchId, turn) === branchId)
      .map((b) => b.branchId));
  }

  private stretch(turn: number): number {
    let lo = 0;
    let hi = this.forkTurns.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.forkTurns[mid]! <= turn) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Call ids, hashed into a 2 MB bit set (three bits each): "may hold" is sure when false, and wrong about one id in
 * thousands when true after 300,000 ids (the bench's file A), which only costs reading some copies again. Holding
 * the ids themselves would cost tens of MB on a large file.
 */
class CallIdFilter {
  private readonly bits = new Uint32Array(1 << 19);

  add(id: string): void {
    for (const bit of this.bitsOf(id)) this.bits[bit >>> 5]! |= 1 << (bit & 31);
  }

  mayHold(id: string): boolean {
    return this.bitsOf(id).every((bit) => (this.bits[bit >>> 5]! & (1 << (bit & 31))) !== 0);
  }

  clear(): void {
    this.bits.fill(0);
  }

  private bitsOf(id: string): number[] {
    let h1 = 0x811c9dc5;
    let h2 = 5381;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = (Math.imul(h2, 33) + c) | 0;
    }
    const size = this.bits.length * 32;
    return [0, 1, 2].map((k) => ((h1 + Math.imul(k, h2 | 1)) >>> 0) % size);
  }
}
