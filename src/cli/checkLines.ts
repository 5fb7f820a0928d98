/**
 * What `agent-sessions check` prints for people (docs/check.md, "Output"): one line per case as it finishes, the
 * failing graders' reasons under it, then the closing line a CI log is read for — `N passed, N failed` — and which
 * graders ran.
 */
import type { CaseResult, CheckReport } from '../agents/check/checkTypes';
import { paint, type Style } from './terminal';

const STATUS: Record<CaseResult['status'], { word: string; style: Style }> = {
  pass: { word: 'PASS', style: 'green' },
  fail: { word: 'FAIL', style: 'red' },
  error: { word: 'ERROR', style: 'red' },
  orphaned: { word: 'ORPHANED', style: 'yellow' },
};

/** Reasons and messages are cut to this many characters on the case's lines (--json has them whole). */
const REASON_CHARS = 300;

function cut(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > REASON_CHARS ? `${flat.slice(0, REASON_CHARS)}…` : flat;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * `PASS alice/main/3  trajectory ✓ answer:contains ✓  412 tok  1.2 s`; a failure's reasons follow, one indented line
 * per failing grader; an error's message and an orphan's reason stand on its line.
 */
export function caseLines(r: CaseResult, color: boolean): string {
  const s = STATUS[r.status];
  const head = `${paint(color, s.style, s.word)} ${r.case.id}`;
  if (r.status === 'orphaned') return `${head}  ${cut(r.error ?? 'the turn changed')}\n`;
  const marks = r.graders.map((g) => `${g.grader} ${g.pass ? paint(color, 'green', '✓') : paint(color, 'red', '✗')}`).join(' ');
  const tokens = r.run?.usage ? `${r.run.usage.totalTokens} tok` : '';
  const line = [head, marks, tokens, seconds(r.ms)].filter((p) => p !== '').join('  ');
  const more: string[] = [];
  if (r.status === 'error') {
    const [first = '', ...rest] = (r.error ?? 'the case could not run').split('\n');
    more.push(`    ${cut(first)}`);
    // An agent's stderr tail comes after its message: the last lines, which say why.
    for (const l of rest.filter((x) => x.trim() !== '').slice(-5)) more.push(`    ${paint(color, 'dim', cut(l))}`);
  }
  for (const g of r.graders) if (!g.pass) more.push(`    ${g.grader}: ${cut(g.reason)}`);
  return `${[line, ...more].join('\n')}\n`;
}

export interface CheckCounts {
  passed: number;
  failed: number;
  errors: number;
  orphaned: number;
}

export function countResults(results: readonly CaseResult[]): CheckCounts {
  const counts: CheckCounts = { passed: 0, failed: 0, errors: 0, orphaned: 0 };
  for (const r of results) {
    if (r.status === 'pass') counts.passed++;
    else if (r.status === 'fail') counts.failed++;
    else if (r.status === 'error') counts.errors++;
    else counts.orphaned++;
  }
  return counts;
}

/** `N passed, N failed` (`, N errors` and `, N orphaned` only when there are any), then which graders ran. */
export function closingLines(report: CheckReport, interrupted: { finished: number; total: number } | null): string {
  const c = countResults(report.results);
  let line = `${c.passed} passed, ${c.failed} failed`;
  if (c.errors > 0) line += `, ${c.errors} error${c.errors === 1 ? '' : 's'}`;
  if (c.orphaned > 0) line += `, ${c.orphaned} orphaned`;
  const lines = [line, `graders: ${report.graders.length > 0 ? report.graders.join(', ') : 'none'}`];
  if (interrupted)
    lines.push(`Interrupted: ${interrupted.finished} of ${interrupted.total} cases finished; the others were stopped or never started.`);
  return `${lines.join('\n')}\n`;
}
