/**
 * A check as JUnit XML, the report CI systems display (docs/check.md, "Reports"): `<testsuites>`, one `<testsuite>`
 * per session branch, one `<testcase>` per case (classname `session/branch`, name `turn N`, time in seconds), a
 * `<failure>` whose message is the failing graders' reasons, an `<error>` for a case that could not be judged, a
 * `<skipped>` for an orphaned one; the graders that ran as properties of each suite, and each grader's result as a
 * property of its case.
 *
 * Every text in it may come from a model, a tool or a reviewer: it is escaped for XML, and characters XML 1.0 does
 * not allow (control characters, lone surrogates, U+FFFE/U+FFFF) are written as `\uXXXX` text, so the file always
 * parses. No CDATA: a case's `]]>` is escaped like any `>`.
 */
import type { CaseResult, CheckReport } from '../checkTypes';
import { caseReasons, checkTotals, interruptionLine, nothingRan, nothingRanLine, type Interruption } from './reportTotals';

/** The longest `message` attribute: 1,000 characters (the element's body has every reason in full). */
const MAX_MESSAGE_CHARS = 1000;

/** Characters XML 1.0 cannot hold (§2.2 Char), paired surrogates aside. */
const NOT_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text with what XML 1.0 cannot hold written as `\uXXXX`. */
export function xmlSafe(text: string): string {
  return text.replace(NOT_XML, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function escapeText(text: string): string {
  return xmlSafe(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value: also quotes, and line breaks and tabs as references (a parser would turn them into spaces). */
function escapeAttribute(text: string): string {
  return escapeText(text)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}

const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);

function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${escapeAttribute(String(v))}"`)
    .join('');
}

function property(name: string, value: string): string {
  return `<property${attributes({ name, value })}/>`;
}

function testcase(r: CaseResult, indent: string): string {
  const c = r.case;
  const lines = [
    `${indent}<testcase${attributes({ classname: `${c.sessionId}/${c.branchId}`, name: `turn ${c.turn}`, time: seconds(r.ms) })}>`,
  ];
  const props = [
    property('case', c.id),
    property('verdict', c.verdict),
    ...r.graders.map((g) => property(`grader:${g.grader}`, `${g.pass ? 'pass' : 'fail'} ${g.score.toFixed(2)}: ${g.reason}`)),
  ];
  if (r.run?.usage) props.push(property('tokens', String(r.run.usage.totalTokens)));
  lines.push(`${indent}  <properties>`, ...props.map((p) => `${indent}    ${p}`), `${indent}  </properties>`);
  const reasons = caseReasons(r);
  const message = reasons.join('; ');
  const short = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message;
  if (r.status === 'fail')
    lines.push(`${indent}  <failure${attributes({ message: short, type: 'fail' })}>${escapeText(reasons.join('\n'))}</failure>`);
  else if (r.status === 'error')
    lines.push(`${indent}  <error${attributes({ message: short, type: 'error' })}>${escapeText(message)}</error>`);
  else if (r.status === 'orphaned') lines.push(`${indent}  <skipped${attributes({ message: `orphaned: ${short}` })}/>`);
  if (r.run) lines.push(`${indent}  <system-out>${escapeText(r.run.answer)}</system-out>`);
  lines.push(`${indent}</testcase>`);
  return lines.join('\n');
}

function counts(results: readonly CaseResult[]): Record<string, number> {
  const t = checkTotals(results);
  return { tests: t.cases, failures: t.failed, errors: t.errors, skipped: t.orphaned };
}

/**
 * The JUnit XML of a check. An interrupted one (`interrupted`) ends with a suite of one errored case saying how many
 * did not finish, counted in the totals: a partial check must not pass in CI's view. So does one in which no case
 * ran (every case orphaned), saying that.
 */
export function junitReport(report: CheckReport, interrupted?: Interruption): string {
  const suites = new Map<string, CaseResult[]>();
  for (const r of report.results) {
    const key = `${r.case.sessionId}/${r.case.branchId}`;
    const list = suites.get(key) ?? [];
    list.push(r);
    suites.set(key, list);
  }
  const total = counts(report.results);
  // A check in which no case ran (every case orphaned) exits 1: its file must not pass in CI's view either, so it
  // gets an errored case saying why, as an interrupted check does.
  const empty = !interrupted && nothingRan(checkTotals(report.results));
  if (interrupted || empty) {
    total.tests = (total.tests ?? 0) + 1;
    total.errors = (total.errors ?? 0) + 1;
  }
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'agent-sessions check', ...total, time: seconds(report.ms), timestamp: report.startedAt })}>`,
  ];
  for (const [name, results] of suites) {
    const time = results.reduce((sum, r) => sum + r.ms, 0);
    out.push(`  <testsuite${attributes({ name, ...counts(results), time: seconds(time), timestamp: report.startedAt })}>`);
    out.push(
      '    <properties>',
      `      ${property('file', report.file)}`,
      `      ${property('graders', report.graders.join(', '))}`,
      '    </properties>',
    );
    for (const r of results) out.push(testcase(r, '    '));
    out.push('  </testsuite>');
  }
  if (interrupted || empty) {
    const message = interrupted ? interruptionLine(interrupted) : nothingRanLine(checkTotals(report.results));
    out.push(
      `  <testsuite${attributes({ name: interrupted ? 'interrupted' : 'nothing checked', tests: 1, failures: 0, errors: 1, skipped: 0, time: seconds(0), timestamp: report.startedAt })}>`,
      `    <testcase${attributes({ classname: 'agent-sessions check', name: interrupted ? 'the check ran to its end' : 'a case ran', time: seconds(0) })}>`,
      `      <error${attributes({ message, type: interrupted ? 'interrupted' : 'nothing-checked' })}>${escapeText(message)}</error>`,
      '    </testcase>',
      '  </testsuite>',
    );
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
