/**
 * A check as a pull-request comment (docs/check.md, "Reports"): the totals line, the graders that ran, a table of the
 * cases that did not pass with their reasons, and, given a baseline, its flips (regressions first).
 *
 * Every reason, id and grader name may hold text from a model, a tool or a reviewer, so each is escaped: HTML and
 * Markdown's punctuation cannot make markup (a pipe cannot split a table cell, a backtick cannot open code, `<img>`
 * stays text), and an `@name` cannot notify anyone. The comment is bounded: at most `MAX_ROWS` rows a table, each
 * cell at most `MAX_CELL_CHARS`, so it stays far below a pull-request comment's 65,536 characters.
 */
import type { BaselineComparison, FlipKind } from '../../../store/experiments/experimentTypes';
import type { CaseResult, CheckReport } from '../checkTypes';
import {
  caseReasons,
  checkPassed,
  checkTotals,
  interruptionLine,
  nothingRan,
  nothingRanLine,
  totalsLine,
  type Interruption,
} from './reportTotals';

/** Rows of a table: 50; the rest counted in a line under it. */
export const MAX_ROWS = 50;
/** Characters of one cell: 400. */
export const MAX_CELL_CHARS = 400;

/**
 * Untrusted text as one line of Markdown that renders as itself: `&`, `<`, `>` as entities; Markdown's punctuation
 * backslash-escaped (GFM: any ASCII punctuation may be); `@` followed by a zero-width space; line breaks as spaces.
 */
export function escapeMarkdown(text: string, max = MAX_CELL_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return cut
    .replace(/[\\`*_{}[\]()#+\-!|~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@/g, '@\u200b');
}

const STATUS: Record<CaseResult['status'], string> = { pass: '✅ pass', fail: '❌ fail', error: '⚠️ error', orphaned: '⏭️ orphaned' };

function table(header: string[], rows: string[][], total: number): string[] {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
  if (total > rows.length) lines.push('', `… and ${total - rows.length} more.`);
  return lines;
}

const FLIP_TITLES: Record<FlipKind, string> = {
  regression: 'Regressions (passed, now fail)',
  fix: 'Fixes (failed, now pass)',
  new: 'New cases',
  missing: 'Missing cases (in the baseline, not checked now)',
};

export interface MarkdownOptions {
  /** The flips from a saved experiment (`--baseline NAME`). */
  comparison?: BaselineComparison;
  /** The check stopped before every case finished: the summary says so, never ✅. */
  interrupted?: Interruption;
}

/** The Markdown summary of a check. */
export function markdownReport(report: CheckReport, options: MarkdownOptions = {}): string {
  const t = checkTotals(report.results);
  const i = options.interrupted;
  // ✅ exactly when the command's exit code is 0: a check in which nothing ran (every case orphaned) failed.
  const icon = i ? '⏹️' : checkPassed(t) ? '✅' : '❌';
  const out = [`### ${icon} Agent check${i ? ' (interrupted)' : ''}: ${totalsLine(t)}`, ''];
  if (i) out.push(`**Not a complete check:** ${interruptionLine(i)}.`, '');
  else if (nothingRan(t)) out.push(`**Nothing was checked:** ${nothingRanLine(t)}.`, '');
  out.push(
    `${t.cases} case${t.cases === 1 ? '' : 's'} in ${(report.ms / 1000).toFixed(1)} s · graders: ${report.graders.map((g) => escapeMarkdown(g, 120)).join(', ') || 'none'}`,
  );
  // Failures and errors first, in the report's order; orphans (which did not run) after them.
  const notPassing = [
    ...report.results.filter((r) => r.status === 'fail' || r.status === 'error'),
    ...report.results.filter((r) => r.status === 'orphaned'),
  ];
  if (notPassing.length > 0) {
    out.push('', '#### Cases that did not pass', '');
    const rows = notPassing
      .slice(0, MAX_ROWS)
      .map((r) => [
        `${escapeMarkdown(`${r.case.sessionId}/${r.case.branchId}`, 120)} turn ${r.case.turn}`,
        r.case.verdict,
        STATUS[r.status],
        escapeMarkdown(caseReasons(r).join('; ')),
      ]);
    out.push(...table(['Case', 'Verdict', 'Status', 'Reasons'], rows, notPassing.length));
  }
  const c = options.comparison;
  if (c) {
    out.push('', `#### Compared with ${escapeMarkdown(c.baseline.name, 120)}`, '');
    if (c.flips.length === 0) out.push(`No flips: ${c.unchanged} case${c.unchanged === 1 ? '' : 's'} as in the baseline.`);
    else {
      const regressions = c.flips.filter((f) => f.kind === 'regression').length;
      const fixes = c.flips.filter((f) => f.kind === 'fix').length;
      out.push(
        `${regressions} regression${regressions === 1 ? '' : 's'}, ${fixes} fix${fixes === 1 ? '' : 'es'}, ${c.unchanged} unchanged.`,
      );
      let shown = 0;
      for (const kind of ['regression', 'fix', 'new', 'missing'] as const) {
        const flips = c.flips.filter((f) => f.kind === kind);
        if (flips.length === 0) continue;
        const rows = flips
          .slice(0, Math.max(0, MAX_ROWS - shown))
          .map((f) => [escapeMarkdown(f.caseId, 160), f.before ?? '–', f.after ?? '–', escapeMarkdown(f.reason)]);
        shown += rows.length;
        out.push('', `**${FLIP_TITLES[kind]}: ${flips.length}**`, '', ...table(['Case', 'Before', 'Now', 'Why'], rows, flips.length));
      }
    }
  }
  out.push('');
  return out.join('\n');
}
