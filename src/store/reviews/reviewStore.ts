/**
 * The review store: verdicts, pairwise verdicts and corrections in one SQLite file of our own (reviewSchema.ts), read
 * and written in single transactions. A change names only the fields it changes and is merged into the row inside its
 * write transaction, so two windows (or processes) reviewing the same session never lose each other's work: different
 * turns both stay, and on one turn one window's tags survive the other's verdict.
 */
import type { OpenOptions } from '../drivers/openDatabase';
import { immediateTransaction, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import { StatementCache, openOwnStore } from '../sqlite/ownStoreFile';
import { ReviewStoreError } from './reviewErrors';
import { REVIEW_STORE_FILE } from './reviewSchema';
import {
  PAIRWISE_OUTCOMES,
  REVIEW_LIMITS,
  VERDICTS,
  type Correction,
  type PairwiseReview,
  type ReviewData,
  type ReviewOrigin,
  type TurnRef,
  type TurnReview,
  type TurnReviewChange,
} from './reviewTypes';

interface TurnRow {
  session_id: string;
  branch_id: string;
  turn_number: number;
  turn_key: string;
  verdict: string | null;
  tags: string;
  note: string;
  source: string | null;
  reviewer: string | null;
  created_ms: number;
  updated_ms: number;
}

interface PairRow {
  session_id: string;
  left_branch: string;
  right_branch: string;
  turn_number: number;
  left_key: string;
  right_key: string;
  outcome: string;
  reason: string;
  left_model: string | null;
  right_model: string | null;
  source: string | null;
  reviewer: string | null;
  created_ms: number;
  updated_ms: number;
}

interface CorrectionRow {
  session_id: string;
  branch_id: string;
  turn_number: number;
  turn_key: string;
  item_key: string;
  text: string;
  source: string | null;
  reviewer: string | null;
  created_ms: number;
  updated_ms: number;
}

const invalid = (message: string): ReviewStoreError => new ReviewStoreError('invalid', message);

/** A tag as stored: lower case, spaces as dashes; letters, digits, `-` and `_` only. */
export function normalizeTag(tag: string): string {
  const t = tag.trim().toLowerCase().replace(/\s+/g, '-');
  if (!/^[\p{L}\p{N}][\p{L}\p{N}_-]*$/u.test(t) || t.length > REVIEW_LIMITS.tagChars)
    throw invalid(`"${tag.slice(0, 60)}" is not a tag: letters, digits, "-" and "_", at most ${REVIEW_LIMITS.tagChars} characters.`);
  return t;
}

function checkRef(ref: TurnRef): void {
  if (typeof ref.sessionId !== 'string' || ref.sessionId === '') throw invalid('A review needs a session id.');
  if (typeof ref.branchId !== 'string' || ref.branchId === '') throw invalid('A review needs a branch id.');
  // A safe integer: past 2^53 a number is no longer the turn it was written as (2^60 shows as 1152921504606847000).
  if (!Number.isSafeInteger(ref.turn) || ref.turn < 1)
    throw invalid(`turn ${shown(ref.turn)} is not a turn number: a whole number from 1 to ${Number.MAX_SAFE_INTEGER} (2^53 - 1).`);
  if (typeof ref.turnKey !== 'string' || !/^[0-9a-f]{32}$/.test(ref.turnKey)) throw invalid('A review needs the content key of its turn.');
}

/**
 * How far past this computer's clock an imported record's `createdMs` or `updatedMs` may be: a day. Clocks differ, by
 * seconds when they keep time, by up to 14 hours when one is set to local time as if it were UTC; a record later
 * than that claims to be from the future, and since the newer record wins on import it would replace every change
 * made to that review until its time came (1e300: never).
 */
export const IMPORT_CLOCK_MARGIN_MS = 86_400_000;

/** The largest time a `Date` holds (`new Date(t).toISOString()` throws past it). */
const MAX_DATE_MS = 8.64e15;

/** A value of an imported field as an error message shows it: a number as JavaScript writes it, text quoted and cut. */
function shown(v: unknown): string {
  if (v === undefined) return 'missing';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return Array.isArray(v) ? 'a list' : 'an object';
}

/** A time in ms as an error message shows it: the number, and its date when it has one. */
function shownTime(ms: number): string {
  return ms <= MAX_DATE_MS ? `${ms} (${new Date(ms).toISOString()})` : String(ms);
}

/**
 * Checks an imported record's times: whole milliseconds since 1970 (a safe integer, 0 or more: a fraction, a negative
 * time or 1e300 is no time a review was made at, and 1e300 would export as `1e+300`), and not later than
 * `IMPORT_CLOCK_MARGIN_MS` past `nowMs`.
 */
function checkTimes(r: { createdMs?: unknown; updatedMs?: unknown }, nowMs: number): void {
  for (const field of ['createdMs', 'updatedMs'] as const) {
    const v = r[field];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      throw invalid(
        `${field} ${shown(v)} is not a time: a whole number of milliseconds since 1970 (UTC), from 0 to a day past this computer's clock.`,
      );
    if (v > nowMs + IMPORT_CLOCK_MARGIN_MS)
      throw invalid(
        `${field} ${shownTime(v)} is more than a day after this computer's clock (${shownTime(nowMs)}): the newer record wins on import, so it would replace every change made to this review until then.`,
      );
  }
}

function checkNote(note: string, limit: number, what: string): void {
  if (typeof note !== 'string') throw invalid(`The ${what} must be text.`);
  if (note.length > limit)
    throw invalid(`The ${what} is ${note.length.toLocaleString('en-US')} characters; at most ${limit.toLocaleString('en-US')}.`);
}

function turnReviewOf(r: TurnRow): TurnReview {
  return {
    sessionId: r.session_id,
    branchId: r.branch_id,
    turn: Number(r.turn_number),
    turnKey: r.turn_key,
    verdict: r.verdict as TurnReview['verdict'],
    tags: JSON.parse(r.tags) as string[],
    note: r.note,
    source: r.source,
    reviewer: r.reviewer,
    createdMs: Number(r.created_ms),
    updatedMs: Number(r.updated_ms),
  };
}

function pairwiseOf(r: PairRow): PairwiseReview {
  return {
    sessionId: r.session_id,
    leftBranch: r.left_branch,
    rightBranch: r.right_branch,
    turn: Number(r.turn_number),
    leftKey: r.left_key,
    rightKey: r.right_key,
    outcome: r.outcome as PairwiseReview['outcome'],
    reason: r.reason,
    leftModel: r.left_model,
    rightModel: r.right_model,
    source: r.source,
    reviewer: r.reviewer,
    createdMs: Number(r.created_ms),
    updatedMs: Number(r.updated_ms),
  };
}

function correctionOf(r: CorrectionRow): Correction {
  return {
    sessionId: r.session_id,
    branchId: r.branch_id,
    turn: Number(r.turn_number),
    turnKey: r.turn_key,
    itemKey: r.item_key,
    text: r.text,
    source: r.source,
    reviewer: r.reviewer,
    createdMs: Number(r.created_ms),
    updatedMs: Number(r.updated_ms),
  };
}

/**
 * A pair in the order the store keeps it (branch ids sorted), the outcome turned with it: "left better" of (b, a) is
 * "right better" of (a, b), so a comparison opened either way finds the same verdict.
 */
export function orderedPair<
  T extends Pick<PairwiseReview, 'leftBranch' | 'rightBranch' | 'leftKey' | 'rightKey' | 'outcome' | 'leftModel' | 'rightModel'>,
>(p: T): T {
  if (p.leftBranch <= p.rightBranch) return p;
  const outcome = p.outcome === 'left' ? 'right' : p.outcome === 'right' ? 'left' : p.outcome;
  return {
    ...p,
    leftBranch: p.rightBranch,
    rightBranch: p.leftBranch,
    leftKey: p.rightKey,
    rightKey: p.leftKey,
    leftModel: p.rightModel,
    rightModel: p.leftModel,
    outcome,
  };
}

export class ReviewStore {
  private readonly statements: StatementCache;

  private constructor(
    readonly db: SqliteDatabase,
    readonly path: string,
  ) {
    this.statements = new StatementCache(db);
  }

  /** Opens (creating when missing and writable) the review store at `path`. */
  static open(path: string, options: Partial<OpenOptions> = {}): ReviewStore {
    return new ReviewStore(openOwnStore(path, options, REVIEW_STORE_FILE), path);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private stmt(sql: string): SqliteStatement {
    return this.statements.get(sql);
  }

  private turnRow(ref: TurnRef): TurnRow | undefined {
    return this.stmt('SELECT * FROM turn_reviews WHERE session_id = ? AND branch_id = ? AND turn_number = ? AND turn_key = ?').get<TurnRow>(
      ref.sessionId,
      ref.branchId,
      ref.turn,
      ref.turnKey,
    );
  }

  /**
   * Changes a turn's review (creating it), merging `change` into what the row holds when the write begins. A review
   * left with no verdict, no tag and no note is removed. Returns the review as stored, or null when removed.
   */
  setTurnReview(ref: TurnRef, change: TurnReviewChange, origin: ReviewOrigin = {}, nowMs = Date.now()): TurnReview | null {
    checkRef(ref);
    if (change.verdict !== undefined && change.verdict !== null && !VERDICTS.includes(change.verdict))
      throw invalid(`"${String(change.verdict)}" is not a verdict (good, bad, or none).`);
    if (change.note !== undefined) checkNote(change.note, REVIEW_LIMITS.noteChars, 'note');
    const norm = (list: string[] | undefined): string[] | undefined => list?.map(normalizeTag);
    const replace = norm(change.tags);
    const add = norm(change.addTags) ?? [];
    const remove = new Set(norm(change.removeTags) ?? []);
    return immediateTransaction(this.db, () => {
      const row = this.turnRow(ref);
      const before = row ? turnReviewOf(row) : undefined;
      const tags = [...new Set([...(replace ?? before?.tags ?? []), ...add])].filter((t) => !remove.has(t)).sort();
      if (tags.length > REVIEW_LIMITS.tags) throw invalid(`A turn can have at most ${REVIEW_LIMITS.tags} tags.`);
      const verdict = change.verdict !== undefined ? change.verdict : (before?.verdict ?? null);
      const note = change.note !== undefined ? change.note : (before?.note ?? '');
      if (verdict === null && tags.length === 0 && note === '') {
        this.stmt('DELETE FROM turn_reviews WHERE session_id = ? AND branch_id = ? AND turn_number = ? AND turn_key = ?').run(
          ref.sessionId,
          ref.branchId,
          ref.turn,
          ref.turnKey,
        );
        return null;
      }
      this.stmt(
        `INSERT INTO turn_reviews (session_id, branch_id, turn_number, turn_key, verdict, tags, note, source, reviewer, created_ms, updated_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id, branch_id, turn_number, turn_key) DO UPDATE SET verdict = excluded.verdict, tags = excluded.tags,
           note = excluded.note, source = coalesce(excluded.source, source), reviewer = coalesce(excluded.reviewer, reviewer),
           updated_ms = excluded.updated_ms`,
      ).run(
        ref.sessionId,
        ref.branchId,
        ref.turn,
        ref.turnKey,
        verdict,
        JSON.stringify(tags),
        note,
        origin.source ?? null,
        origin.reviewer ?? null,
        before?.createdMs ?? nowMs,
        nowMs,
      );
      return turnReviewOf(this.turnRow(ref)!);
    });
  }

  /** A session's turn reviews (of one branch, when given), by branch and turn; every session's with `sessionId` null. */
  turnReviews(sessionId: string | null, branchId?: string): TurnReview[] {
    const rows =
      sessionId === null
        ? this.stmt('SELECT * FROM turn_reviews ORDER BY session_id, branch_id, turn_number, updated_ms').all<TurnRow>()
        : branchId === undefined
          ? this.stmt('SELECT * FROM turn_reviews WHERE session_id = ? ORDER BY branch_id, turn_number, updated_ms').all<TurnRow>(sessionId)
          : this.stmt('SELECT * FROM turn_reviews WHERE session_id = ? AND branch_id = ? ORDER BY turn_number, updated_ms').all<TurnRow>(
              sessionId,
              branchId,
            );
    return rows.map(turnReviewOf);
  }

  /** Every tag in use, most used first (the tag picker offers them after the defaults). */
  tagsInUse(): { tag: string; count: number }[] {
    return this.stmt(
      'SELECT j.value AS tag, count(*) AS count FROM turn_reviews, json_each(turn_reviews.tags) AS j GROUP BY j.value ORDER BY count DESC, tag',
    )
      .all<{ tag: string; count: number }>()
      .map((r) => ({ tag: r.tag, count: Number(r.count) }));
  }

  /** Sets the pairwise verdict on one aligned turn of two branches (either order: see `orderedPair`). */
  setPairwise(
    p: Omit<PairwiseReview, 'createdMs' | 'updatedMs' | 'source' | 'reviewer'>,
    origin: ReviewOrigin = {},
    nowMs = Date.now(),
  ): PairwiseReview {
    if (!PAIRWISE_OUTCOMES.includes(p.outcome))
      throw invalid(`"${String(p.outcome)}" is not a pairwise outcome (left, right, tie, both-bad).`);
    if (p.leftBranch === p.rightBranch) throw invalid('A pairwise verdict compares two different branches.');
    checkRef({ sessionId: p.sessionId, branchId: p.leftBranch, turn: p.turn, turnKey: p.leftKey });
    checkRef({ sessionId: p.sessionId, branchId: p.rightBranch, turn: p.turn, turnKey: p.rightKey });
    checkNote(p.reason, REVIEW_LIMITS.noteChars, 'reason');
    const o = orderedPair(p);
    return immediateTransaction(this.db, () => {
      const key = [o.sessionId, o.leftBranch, o.rightBranch, o.turn, o.leftKey, o.rightKey] as const;
      const before = this.stmt(
        'SELECT created_ms FROM pairwise_reviews WHERE session_id = ? AND left_branch = ? AND right_branch = ? AND turn_number = ? AND left_key = ? AND right_key = ?',
      ).get<{ created_ms: number }>(...key);
      this.stmt(
        `INSERT INTO pairwise_reviews (session_id, left_branch, right_branch, turn_number, left_key, right_key, outcome, reason, left_model,
           right_model, source, reviewer, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id, left_branch, right_branch, turn_number, left_key, right_key) DO UPDATE SET outcome = excluded.outcome,
           reason = excluded.reason, left_model = coalesce(excluded.left_model, left_model), right_model = coalesce(excluded.right_model, right_model),
           source = coalesce(excluded.source, source), reviewer = coalesce(excluded.reviewer, reviewer), updated_ms = excluded.updated_ms`,
      ).run(
        ...key,
        o.outcome,
        o.reason,
        o.leftModel,
        o.rightModel,
        origin.source ?? null,
        origin.reviewer ?? null,
        before ? Number(before.created_ms) : nowMs,
        nowMs,
      );
      return pairwiseOf(
        this.stmt(
          'SELECT * FROM pairwise_reviews WHERE session_id = ? AND left_branch = ? AND right_branch = ? AND turn_number = ? AND left_key = ? AND right_key = ?',
        ).get<PairRow>(...key)!,
      );
    });
  }

  /** Removes the pairwise verdict on one aligned turn of two branches (either order); false when there was none. */
  deletePairwise(p: Pick<PairwiseReview, 'sessionId' | 'leftBranch' | 'rightBranch' | 'turn' | 'leftKey' | 'rightKey'>): boolean {
    const o = orderedPair({ ...p, outcome: 'tie', leftModel: null, rightModel: null });
    return (
      immediateTransaction(
        this.db,
        () =>
          this.stmt(
            'DELETE FROM pairwise_reviews WHERE session_id = ? AND left_branch = ? AND right_branch = ? AND turn_number = ? AND left_key = ? AND right_key = ?',
          ).run(o.sessionId, o.leftBranch, o.rightBranch, o.turn, o.leftKey, o.rightKey).changes,
      ) > 0
    );
  }

  /** A session's pairwise verdicts (of one pair of branches, in either order, when given). */
  pairwiseReviews(sessionId: string, pair?: [string, string]): PairwiseReview[] {
    if (!pair)
      return this.stmt('SELECT * FROM pairwise_reviews WHERE session_id = ? ORDER BY left_branch, right_branch, turn_number')
        .all<PairRow>(sessionId)
        .map(pairwiseOf);
    const [a, b] = pair[0] <= pair[1] ? pair : [pair[1], pair[0]];
    return this.stmt('SELECT * FROM pairwise_reviews WHERE session_id = ? AND left_branch = ? AND right_branch = ? ORDER BY turn_number')
      .all<PairRow>(sessionId, a, b)
      .map(pairwiseOf);
  }

  /** Stores the answer an assistant item should have given (replacing an earlier correction of that item). */
  setCorrection(ref: TurnRef & { itemKey: string; text: string }, origin: ReviewOrigin = {}, nowMs = Date.now()): Correction {
    checkRef(ref);
    if (typeof ref.itemKey !== 'string' || !/^[0-9a-f]{32}$/.test(ref.itemKey))
      throw invalid('A correction needs the content key of its item.');
    checkNote(ref.text, REVIEW_LIMITS.correctionChars, 'correction');
    if (ref.text.trim() === '') throw invalid('A correction needs the answer it should have given.');
    return immediateTransaction(this.db, () => {
      const key = [ref.sessionId, ref.branchId, ref.turn, ref.turnKey, ref.itemKey] as const;
      const where = 'session_id = ? AND branch_id = ? AND turn_number = ? AND turn_key = ? AND item_key = ?';
      const before = this.stmt(`SELECT created_ms FROM corrections WHERE ${where}`).get<{ created_ms: number }>(...key);
      this.stmt(
        `INSERT INTO corrections (session_id, branch_id, turn_number, turn_key, item_key, text, source, reviewer, created_ms, updated_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id, branch_id, turn_number, turn_key, item_key) DO UPDATE SET text = excluded.text,
           source = coalesce(excluded.source, source), reviewer = coalesce(excluded.reviewer, reviewer), updated_ms = excluded.updated_ms`,
      ).run(...key, ref.text, origin.source ?? null, origin.reviewer ?? null, before ? Number(before.created_ms) : nowMs, nowMs);
      return correctionOf(this.stmt(`SELECT * FROM corrections WHERE ${where}`).get<CorrectionRow>(...key)!);
    });
  }

  /** A session's corrections (of one branch, when given). */
  corrections(sessionId: string, branchId?: string): Correction[] {
    const rows =
      branchId === undefined
        ? this.stmt('SELECT * FROM corrections WHERE session_id = ? ORDER BY branch_id, turn_number').all<CorrectionRow>(sessionId)
        : this.stmt('SELECT * FROM corrections WHERE session_id = ? AND branch_id = ? ORDER BY turn_number').all<CorrectionRow>(
            sessionId,
            branchId,
          );
    return rows.map(correctionOf);
  }

  /** Removes a correction; false when there was none. */
  deleteCorrection(ref: TurnRef & { itemKey: string }): boolean {
    return (
      immediateTransaction(
        this.db,
        () =>
          this.stmt(
            'DELETE FROM corrections WHERE session_id = ? AND branch_id = ? AND turn_number = ? AND turn_key = ? AND item_key = ?',
          ).run(ref.sessionId, ref.branchId, ref.turn, ref.turnKey, ref.itemKey).changes,
      ) > 0
    );
  }

  /** Everything the store holds for one session (or every session), as the export file carries it. */
  exportData(sessionId?: string): ReviewData {
    const where = sessionId === undefined ? '' : ' WHERE session_id = ?';
    const args = sessionId === undefined ? [] : [sessionId];
    return {
      format: 'agent-session-inspector/reviews',
      version: 1,
      turnReviews: this.db
        .prepare(`SELECT * FROM turn_reviews${where} ORDER BY session_id, branch_id, turn_number`)
        .all<TurnRow>(...args)
        .map(turnReviewOf),
      pairwise: this.db
        .prepare(`SELECT * FROM pairwise_reviews${where} ORDER BY session_id, left_branch, right_branch, turn_number`)
        .all<PairRow>(...args)
        .map(pairwiseOf),
      corrections: this.db
        .prepare(`SELECT * FROM corrections${where} ORDER BY session_id, branch_id, turn_number`)
        .all<CorrectionRow>(...args)
        .map(correctionOf),
    };
  }

  /**
   * Adds exported review data in one transaction: a record the store lacks is added, one it holds is replaced when the
   * import's is newer (`updatedMs`), else kept. The whole file is checked first (`checkReviewData`, its times against
   * `nowMs`): one bad record imports nothing.
   */
  importData(data: unknown, nowMs = Date.now()): { added: number; updated: number; kept: number } {
    const d = checkReviewData(data, nowMs);
    return immediateTransaction(this.db, () => {
      const result = { added: 0, updated: 0, kept: 0 };
      const count = (before: number | undefined, updatedMs: number): boolean => {
        if (before === undefined) result.added++;
        else if (updatedMs > before) result.updated++;
        else {
          result.kept++;
          return false;
        }
        return true;
      };
      for (const r of d.turnReviews) {
        const before = this.turnRow(r);
        if (!count(before ? Number(before.updated_ms) : undefined, r.updatedMs)) continue;
        this.stmt(
          `INSERT OR REPLACE INTO turn_reviews (session_id, branch_id, turn_number, turn_key, verdict, tags, note, source, reviewer, created_ms, updated_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          r.sessionId,
          r.branchId,
          r.turn,
          r.turnKey,
          r.verdict,
          JSON.stringify([...new Set(r.tags.map(normalizeTag))].sort()),
          r.note,
          r.source ?? null,
          r.reviewer ?? null,
          r.createdMs,
          r.updatedMs,
        );
      }
      for (const p0 of d.pairwise) {
        const p = orderedPair(p0);
        const key = [p.sessionId, p.leftBranch, p.rightBranch, p.turn, p.leftKey, p.rightKey] as const;
        const before = this.stmt(
          'SELECT updated_ms FROM pairwise_reviews WHERE session_id = ? AND left_branch = ? AND right_branch = ? AND turn_number = ? AND left_key = ? AND right_key = ?',
        ).get<{ updated_ms: number }>(...key);
        if (!count(before ? Number(before.updated_ms) : undefined, p.updatedMs)) continue;
        this.stmt(
          `INSERT OR REPLACE INTO pairwise_reviews (session_id, left_branch, right_branch, turn_number, left_key, right_key, outcome, reason, left_model,
             right_model, source, reviewer, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(...key, p.outcome, p.reason, p.leftModel, p.rightModel, p.source ?? null, p.reviewer ?? null, p.createdMs, p.updatedMs);
      }
      for (const c of d.corrections) {
        const key = [c.sessionId, c.branchId, c.turn, c.turnKey, c.itemKey] as const;
        const before = this.stmt(
          'SELECT updated_ms FROM corrections WHERE session_id = ? AND branch_id = ? AND turn_number = ? AND turn_key = ? AND item_key = ?',
        ).get<{ updated_ms: number }>(...key);
        if (!count(before ? Number(before.updated_ms) : undefined, c.updatedMs)) continue;
        this.stmt(
          `INSERT OR REPLACE INTO corrections (session_id, branch_id, turn_number, turn_key, item_key, text, source, reviewer, created_ms, updated_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(...key, c.text, c.source ?? null, c.reviewer ?? null, c.createdMs, c.updatedMs);
      }
      return result;
    });
  }

  /** How many reviews of each kind the store holds. */
  counts(): { turnReviews: number; pairwise: number; corrections: number } {
    const n = (table: string): number => Number(this.stmt(`SELECT count(*) AS n FROM ${table}`).get<{ n: number }>()!.n);
    return { turnReviews: n('turn_reviews'), pairwise: n('pairwise_reviews'), corrections: n('corrections') };
  }
}

/**
 * Checks an export file's content record by record; the first problem is the error, with where it is (the list and the
 * record's place in it) and the field. `nowMs`: this computer's clock, which no record's time may be more than
 * `IMPORT_CLOCK_MARGIN_MS` past.
 */
export function checkReviewData(data: unknown, nowMs = Date.now()): ReviewData {
  const d = data as Partial<ReviewData> | null;
  if (!d || typeof d !== 'object' || d.format !== 'agent-session-inspector/reviews')
    throw invalid('This is not review data (no "format": "agent-session-inspector/reviews").');
  if (d.version !== 1)
    throw new ReviewStoreError('newer-format', `This review data is version ${String(d.version)}; this version reads version 1.`);
  const list = <T>(name: keyof ReviewData): T[] => {
    const v = d[name];
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw invalid(`"${name}" must be a list.`);
    return v as T[];
  };
  const at = (name: string, i: number, check: () => void): void => {
    try {
      check();
    } catch (err) {
      throw invalid(`${name}[${i}]: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  // Text or null, as the format says: they are bound as SQL parameters, where an object would be taken for named
  // parameters (SQLite's "Too few parameter values"), a list spread into the positional ones after it (its items
  // stored as the next columns) and a number stored as text of SQLite's own ("12345.0").
  const origin = (r: { source?: unknown; reviewer?: unknown }): void => {
    for (const field of ['source', 'reviewer'] as const) {
      const v = r[field];
      if (v !== undefined && v !== null && typeof v !== 'string') throw invalid(`${field} must be text or null.`);
    }
  };
  const turnReviews = list<TurnReview>('turnReviews');
  turnReviews.forEach((r, i) =>
    at('turnReviews', i, () => {
      checkRef(r);
      if (r.verdict !== null && !VERDICTS.includes(r.verdict)) throw invalid(`"${String(r.verdict)}" is not a verdict.`);
      if (!Array.isArray(r.tags)) throw invalid('tags must be a list.');
      // The same bound a verdict written in the view or the CLI meets, counted as the store keeps tags (normalized, once).
      if (new Set(r.tags.map(normalizeTag)).size > REVIEW_LIMITS.tags) throw invalid(`A turn can have at most ${REVIEW_LIMITS.tags} tags.`);
      checkNote(r.note, REVIEW_LIMITS.noteChars, 'note');
      origin(r);
      checkTimes(r, nowMs);
    }),
  );
  const pairwise = list<PairwiseReview>('pairwise');
  pairwise.forEach((p, i) =>
    at('pairwise', i, () => {
      checkRef({ sessionId: p.sessionId, branchId: p.leftBranch, turn: p.turn, turnKey: p.leftKey });
      checkRef({ sessionId: p.sessionId, branchId: p.rightBranch, turn: p.turn, turnKey: p.rightKey });
      if (p.leftBranch === p.rightBranch) throw invalid('A pairwise verdict compares two different branches.');
      if (!PAIRWISE_OUTCOMES.includes(p.outcome)) throw invalid(`"${String(p.outcome)}" is not a pairwise outcome.`);
      checkNote(p.reason, REVIEW_LIMITS.noteChars, 'reason');
      if ((p.leftModel ?? null) !== null && typeof p.leftModel !== 'string') throw invalid('leftModel must be text or null.');
      if ((p.rightModel ?? null) !== null && typeof p.rightModel !== 'string') throw invalid('rightModel must be text or null.');
      p.leftModel ??= null;
      p.rightModel ??= null;
      origin(p);
      checkTimes(p, nowMs);
    }),
  );
  const corrections = list<Correction>('corrections');
  corrections.forEach((c, i) =>
    at('corrections', i, () => {
      checkRef(c);
      if (typeof c.itemKey !== 'string' || !/^[0-9a-f]{32}$/.test(c.itemKey)) throw invalid('itemKey must be a content key.');
      checkNote(c.text, REVIEW_LIMITS.correctionChars, 'correction');
      if (c.text.trim() === '') throw invalid('A correction needs the answer it should have given.');
      origin(c);
      checkTimes(c, nowMs);
    }),
  );
  return { format: 'agent-session-inspector/reviews', version: 1, turnReviews, pairwise, corrections };
}
