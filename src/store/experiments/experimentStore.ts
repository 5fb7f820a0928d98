/**
 * The experiment store (docs/check.md, "Experiments"): saved checks in one SQLite file of our own
 * (experimentSchema.ts), each saved in one transaction, listed, read back and compared with a new check. By default
 * it lives beside the review store the check read (`defaultExperimentsPath`); it is never the session file, which
 * the store refuses untouched as it refuses any file that is not one of ours.
 */
import { basename, dirname, join } from 'node:path';
import { BUILT_IN_PRICES, costOf, priceOf, type PriceTable } from '../../shared/pricing';
import type { ReplaySummary } from '../../shared/protocol/replay';
import type { RunUsageView } from '../../shared/protocol/runEvents';
import type { OpenOptions } from '../drivers/openDatabase';
import { cutValue } from '../query/dataBlock';
import { immediateTransaction, type SqlValue, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import { StatementCache, openOwnStore } from '../sqlite/ownStoreFile';
import { baselineFlips, type FlipSide } from './baselineFlips';
import { ExperimentStoreError } from './experimentErrors';
import { EXPERIMENT_STORE_FILE } from './experimentSchema';
import {
  EXPERIMENT_LIMITS,
  type BaselineComparison,
  type ExperimentCall,
  type ExperimentCaseResult,
  type ExperimentGrade,
  type ExperimentReport,
  type ExperimentSummary,
  type SavedCase,
  type SavedExperiment,
} from './experimentTypes';

/**
 * Where a check keeps its experiments unless told (`--experiments PATH`): beside the review store, named after it —
 * `reviews.db` → `reviews.experiments.db` (a `.db`, `.sqlite` or `.sqlite3` extension replaced; any other name
 * gets `.experiments.db` added).
 */
export function defaultExperimentsPath(reviewsPath: string): string {
  const name = basename(reviewsPath).replace(/\.(db|sqlite3?)$/i, '');
  return join(dirname(reviewsPath), `${name}.experiments.db`);
}

export interface SaveOptions {
  /** Replace an experiment of that name (`--force`); without it, an existing name is refused. */
  force?: boolean;
  /** The agent's model, when known: it prices the tokens (src/shared/pricing.ts). */
  model?: string | null;
  prices?: PriceTable;
  nowMs?: number;
}

interface ExperimentRow {
  experiment_id: number;
  name: string;
  session_file: string;
  graders: string;
  model: string | null;
  started_at: string;
  duration_ms: number;
  saved_ms: number;
  cases: number;
  passed: number;
  failed: number;
  errors: number;
  orphaned: number;
  total_tokens: number | null;
  cost_usd: number | null;
}

interface CaseRow {
  case_id: string;
  session_id: string;
  branch_id: string;
  turn_number: number;
  content_key: string;
  verdict: string;
  status: string;
  answer: string | null;
  calls: string | null;
  requests: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: number | null;
  latency_ms: number | null;
  case_ms: number;
  replay: string | null;
  error: string | null;
  kept_branch: string | null;
}

interface GradeRow {
  case_id: string;
  grader: string;
  pass: number;
  score: number;
  reason: string;
}

const invalid = (message: string) => new ExperimentStoreError('invalid', message);

/** A name as kept: trimmed, 1 to 100 characters, no control characters. */
export function checkExperimentName(name: string): string {
  const n = typeof name === 'string' ? name.trim() : '';
  // eslint-disable-next-line no-control-regex
  if (n === '' || n.length > EXPERIMENT_LIMITS.nameChars || /[\u0000-\u001f\u007f]/.test(n))
    throw invalid(
      `"${String(name).slice(0, 60)}" is not an experiment name: 1 to ${EXPERIMENT_LIMITS.nameChars} characters, no control characters.`,
    );
  return n;
}

const cut = (text: string, limit: number) => cutValue(text, limit);

function keptCalls(calls: readonly ExperimentCall[]): ExperimentCall[] {
  return calls.slice(0, EXPERIMENT_LIMITS.callsPerCase).map((c) => {
    const output = typeof c.output === 'string' ? c.output : (JSON.stringify(c.output) ?? null);
    return {
      name: cut(c.name, 200),
      arguments: cut(c.arguments, EXPERIMENT_LIMITS.callChars),
      // An output is kept as it was when small (a list of content parts stays a list), as text when cut.
      output: output !== null && output.length > EXPERIMENT_LIMITS.callChars ? cut(output, EXPERIMENT_LIMITS.callChars) : c.output,
    };
  });
}

/** Why a case did not pass, for flips: its error, or its failing graders' reasons. */
function notPassReason(status: string, error: string | null, grades: readonly ExperimentGrade[]): string {
  if (status === 'pass') return '';
  if (error) return error;
  return grades
    .filter((g) => !g.pass)
    .map((g) => `${g.grader}: ${g.reason}`)
    .join('; ');
}

function checkReport(report: ExperimentReport): void {
  if (!report || !Array.isArray(report.results) || !Array.isArray(report.graders)) throw invalid('A check report has graders and results.');
  if (report.results.length > EXPERIMENT_LIMITS.cases)
    throw invalid(
      `A saved experiment holds at most ${EXPERIMENT_LIMITS.cases.toLocaleString('en-US')} cases; this one has ${report.results.length}.`,
    );
  const ids = new Set<string>();
  for (const r of report.results) {
    if (ids.has(r.case.id)) throw invalid(`The case ${r.case.id} is in the report twice.`);
    ids.add(r.case.id);
  }
}

export class ExperimentStore {
  private readonly statements: StatementCache;

  private constructor(
    readonly db: SqliteDatabase,
    readonly path: string,
  ) {
    this.statements = new StatementCache(db);
  }

  /** Opens (creating when missing and writable) the experiment store at `path`. */
  static open(path: string, options: Partial<OpenOptions> = {}): ExperimentStore {
    return new ExperimentStore(openOwnStore(path, options, EXPERIMENT_STORE_FILE), path);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private stmt(sql: string): SqliteStatement {
    return this.statements.get(sql);
  }

  /**
   * Saves a check's report as experiment `name`, in one transaction: all of it or, on any error, nothing. A name saved
   * already is refused (`exists`) unless `force`, which replaces it in the same transaction.
   */
  saveExperiment(name: string, report: ExperimentReport, options: SaveOptions = {}): ExperimentSummary {
    const n = checkExperimentName(name);
    checkReport(report);
    const price = priceOf(options.prices ?? BUILT_IN_PRICES, options.model ?? null);
    immediateTransaction(this.db, () => {
      const old = this.stmt('SELECT experiment_id, saved_ms FROM experiments WHERE name = ?').get<{
        experiment_id: number;
        saved_ms: number;
      }>(n);
      if (old) {
        if (!options.force)
          throw new ExperimentStoreError(
            'exists',
            `An experiment named "${n}" was saved on ${new Date(Number(old.saved_ms)).toISOString()} in ${this.path}; choose another name, or replace it with --force.`,
          );
        for (const table of ['experiment_grades', 'experiment_cases', 'experiments'])
          this.stmt(`DELETE FROM ${table} WHERE experiment_id = ?`).run(old.experiment_id);
      }
      const id = Number(
        this.stmt(
          'INSERT INTO experiments (name, session_file, graders, model, started_at, duration_ms, saved_ms) VALUES (?, ?, ?, ?, ?, ?, ?)',
        ).run(
          n,
          report.file,
          JSON.stringify(report.graders),
          options.model ?? null,
          report.startedAt,
          Math.round(report.ms),
          options.nowMs ?? Date.now(),
        ).lastInsertRowid,
      );
      for (const r of report.results) this.saveCase(id, r, price);
    });
    return this.summary(n)!;
  }

  private saveCase(id: number, r: ExperimentCaseResult, price: ReturnType<typeof priceOf>): void {
    const run = r.run;
    const usage = run?.usage ?? null;
    const cost = usage
      ? costOf(
          {
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            cachedTokens: usage.cachedTokens,
            reasoningTokens: usage.reasoningTokens,
          },
          price,
        )
      : null;
    this.stmt(
      `INSERT INTO experiment_cases (experiment_id, case_id, session_id, branch_id, turn_number, content_key, verdict, status, answer,
         calls, requests, input_tokens, output_tokens, total_tokens, cached_tokens, reasoning_tokens, cost_usd, latency_ms, case_ms,
         replay, error, kept_branch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      r.case.id,
      r.case.sessionId,
      r.case.branchId,
      r.case.turn,
      r.case.contentKey,
      r.case.verdict,
      r.status,
      run ? cut(run.answer, EXPERIMENT_LIMITS.answerChars) : null,
      run ? JSON.stringify(keptCalls(run.trajectory)) : null,
      usage?.requests ?? null,
      usage?.inputTokens ?? null,
      usage?.outputTokens ?? null,
      usage?.totalTokens ?? null,
      usage?.cachedTokens ?? null,
      usage?.reasoningTokens ?? null,
      cost,
      run ? Math.round(run.ms) : null,
      Math.round(r.ms),
      run?.replay ? JSON.stringify(run.replay) : null,
      r.error === null ? null : cut(r.error, EXPERIMENT_LIMITS.textChars),
      run?.branchId ?? null,
    );
    r.graders.forEach((g, position) =>
      this.stmt(
        'INSERT INTO experiment_grades (experiment_id, case_id, position, grader, pass, score, reason) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(id, r.case.id, position, g.grader, g.pass ? 1 : 0, g.score, cut(g.reason, EXPERIMENT_LIMITS.textChars)),
    );
  }

  private summaries(where: string, ...params: SqlValue[]): ExperimentSummary[] {
    return this.stmt(
      `SELECT e.*, COUNT(c.case_id) AS cases,
         COUNT(CASE c.status WHEN 'pass' THEN 1 END) AS passed, COUNT(CASE c.status WHEN 'fail' THEN 1 END) AS failed,
         COUNT(CASE c.status WHEN 'error' THEN 1 END) AS errors, COUNT(CASE c.status WHEN 'orphaned' THEN 1 END) AS orphaned,
         SUM(c.total_tokens) AS total_tokens, SUM(c.cost_usd) AS cost_usd
       FROM experiments e LEFT JOIN experiment_cases c ON c.experiment_id = e.experiment_id
       ${where} GROUP BY e.experiment_id ORDER BY e.saved_ms DESC, e.experiment_id DESC`,
    )
      .all<ExperimentRow>(...params)
      .map((r) => ({
        name: r.name,
        file: r.session_file,
        graders: JSON.parse(r.graders) as string[],
        model: r.model,
        startedAt: r.started_at,
        ms: Number(r.duration_ms),
        savedMs: Number(r.saved_ms),
        cases: Number(r.cases),
        passed: Number(r.passed),
        failed: Number(r.failed),
        errors: Number(r.errors),
        orphaned: Number(r.orphaned),
        totalTokens: Number(r.total_tokens ?? 0),
        costUsd: r.cost_usd === null ? null : Number(r.cost_usd),
      }));
  }

  private summary(name: string): ExperimentSummary | undefined {
    return this.summaries('WHERE e.name = ?', name)[0];
  }

  /** Every saved experiment, the newest first. */
  listExperiments(): ExperimentSummary[] {
    return this.summaries('');
  }

  /** A saved experiment with its cases (in the order they were saved), or null. */
  getExperiment(name: string): SavedExperiment | null {
    name = name.trim();
    const summary = this.summary(name);
    if (!summary) return null;
    const id = this.stmt('SELECT experiment_id FROM experiments WHERE name = ?').get<{ experiment_id: number }>(name)!.experiment_id;
    const grades = new Map<string, ExperimentGrade[]>();
    for (const g of this.stmt('SELECT * FROM experiment_grades WHERE experiment_id = ? ORDER BY case_id, position').all<GradeRow>(id)) {
      const list = grades.get(g.case_id) ?? [];
      list.push({ grader: g.grader, pass: Number(g.pass) === 1, score: Number(g.score), reason: g.reason });
      grades.set(g.case_id, list);
    }
    const cases = this.stmt('SELECT * FROM experiment_cases WHERE experiment_id = ? ORDER BY rowid')
      .all<CaseRow>(id)
      .map((r): SavedCase => {
        const usage: RunUsageView | null =
          r.total_tokens === null
            ? null
            : {
                requests: Number(r.requests ?? 0),
                inputTokens: Number(r.input_tokens ?? 0),
                outputTokens: Number(r.output_tokens ?? 0),
                totalTokens: Number(r.total_tokens),
                cachedTokens: Number(r.cached_tokens ?? 0),
                reasoningTokens: Number(r.reasoning_tokens ?? 0),
              };
        return {
          caseId: r.case_id,
          sessionId: r.session_id,
          branchId: r.branch_id,
          turn: Number(r.turn_number),
          contentKey: r.content_key,
          verdict: r.verdict as SavedCase['verdict'],
          status: r.status as SavedCase['status'],
          grades: grades.get(r.case_id) ?? [],
          answer: r.answer,
          calls: r.calls === null ? null : (JSON.parse(r.calls) as ExperimentCall[]),
          usage,
          costUsd: r.cost_usd === null ? null : Number(r.cost_usd),
          latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
          caseMs: Number(r.case_ms),
          replay: r.replay === null ? null : (JSON.parse(r.replay) as ReplaySummary),
          error: r.error,
          keptBranch: r.kept_branch,
        };
      });
    return { summary, cases };
  }

  /** The flips from the saved experiment `name` to `report` (baselineFlips.ts); `not-found` for an unknown name. */
  compareWithBaseline(name: string, report: ExperimentReport): BaselineComparison {
    const saved = this.getExperiment(name);
    if (!saved) {
      const names = this.listExperiments().map((e) => e.name);
      throw new ExperimentStoreError(
        'not-found',
        `No experiment named "${name}" in ${this.path}${names.length > 0 ? ` (saved: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''})` : ' (it holds none)'}.`,
      );
    }
    const before: FlipSide[] = saved.cases.map((c) => ({
      caseId: c.caseId,
      sessionId: c.sessionId,
      branchId: c.branchId,
      turn: c.turn,
      contentKey: c.contentKey,
      status: c.status,
      reason: notPassReason(c.status, c.error, c.grades),
    }));
    const after: FlipSide[] = report.results.map((r) => ({
      caseId: r.case.id,
      sessionId: r.case.sessionId,
      branchId: r.case.branchId,
      turn: r.case.turn,
      contentKey: r.case.contentKey,
      status: r.status,
      reason: notPassReason(r.status, r.error, r.graders),
    }));
    return { baseline: saved.summary, ...baselineFlips(before, after) };
  }
}
