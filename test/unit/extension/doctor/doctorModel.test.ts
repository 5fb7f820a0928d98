/**
 * What VS Code shows of a doctor report (issue 45, "In VS Code"): the document of a checked session (its branches and
 * turns, each finding on the line of its turn or branch, bounded), and the diagnostic each finding makes (what it
 * breaks, the kind linked to its docs section, the severity, whether a Quick Fix is offered). Built from real reports
 * of the doctor fixtures, and from a finding of a kind this build does not list.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Finding } from '../../../../src/store/doctor/checkContext';
import { checkSessionFile } from '../../../../src/store/doctor/doctorReport';
import type { FindingKind } from '../../../../src/store/doctor/findingKinds';
import { openSessionDatabase } from '../../../../src/store';
import {
  MAX_TURNS_PER_BRANCH,
  diagnosticSpecs,
  docsUrl,
  doctorDocument,
  oneLinePreview,
  rowLines,
  targetOf,
  type DocBranch,
  type DocWords,
} from '../../../../src/extension/doctor/doctorModel';
import { makeDoctorFixture } from '../../../support/doctorFixtures';
import { tempDir } from '../../../support/tempFiles';

const words: DocWords = {
  header: 'HEADER',
  checked: 'CHECKED',
  branch: (b, n) => `branch ${b} (${n})`,
  branchWithoutRows: (b) => `branch ${b} (no rows)`,
  turn: (t, p) => `turn ${t}: ${p ?? '?'}`,
  turnNotHeld: (t) => `turn ${t} (not held)`,
  moreTurns: (n) => `+${n} turns`,
  moreBranches: (n) => `+${n} branches`,
};

/** The session's branches and turns as the extension reads them (here straight from the inspector). */
function branchesOf(file: string, session: string): DocBranch[] {
  const db = openSessionDatabase(file, { readonly: true });
  try {
    return db.getBranchTree(session).map((b) => ({
      branchId: b.branchId,
      turnCount: b.userTurns,
      turns: db.getTurnsPage(session, b.branchId, { limit: MAX_TURNS_PER_BRANCH }).turns.map((t) => ({ turn: t.turn, preview: t.preview })),
    }));
  } finally {
    db.close();
  }
}

describe('doctor in VS Code: the document and its diagnostics', () => {
  const tmp = tempDir('asi-doctor-model-');
  after(() => tmp.cleanup());
  let n = 0;
  const check = (kind: FindingKind) => {
    const file = join(tmp.dir, `${n++}-${kind}.db`);
    makeDoctorFixture(kind, file);
    return { file, report: checkSessionFile(file) };
  };
  const lineOf = (text: string, i: number) => text.split('\n')[i];

  it('puts a turn-0 usage row on a line of its own under its branch, which holds no rows: a warning with a Quick Fix', () => {
    const { file, report } = check('turn-zero-usage');
    const findings = report.findings.filter((f) => f.session === 'alice');
    assert.equal(findings.length, 1);
    const doc = doctorDocument(branchesOf(file, 'alice'), findings, words);
    // The branch exists only as a reservation: the document says so and lists turn 0 as not held.
    assert.equal(lineOf(doc.text, doc.findingLines[0]!), '  turn 0 (not held)');
    assert.equal(lineOf(doc.text, doc.findingLines[0]! - 1), 'branch fresh (no rows)');
    assert.match(doc.text, /^branch main \(2\)\n {2}turn 1: /m);
    const [spec] = diagnosticSpecs(findings, doc.findingLines, report.integrityOk);
    assert.deepEqual(
      { ...spec, message: spec!.message.split('\n')[0] },
      {
        line: doc.findingLines[0],
        severity: 'warning',
        message: 'Session and branch token totals count a run no turn shows; no delete_branch ever removes the row.',
        code: { value: 'turn-zero-usage', target: `${docsUrl('turn-zero-usage')}` },
        repairable: true,
      },
    );
    assert.ok(spec!.code.target.endsWith('/docs/doctor.md#turn-zero-usage'));
    // The message says what was seen too: the row and its tokens.
    assert.match(spec!.message.split('\n')[1]!, /turn_usage row 8 \(15 tokens\)/);
  });

  it("puts a dangling call on its turn's line: an error with a Quick Fix", () => {
    const { file, report } = check('dangling-tool-call');
    const f = report.findings[0]!;
    const doc = doctorDocument(branchesOf(file, 'bob'), [f], words);
    assert.match(lineOf(doc.text, doc.findingLines[0]!)!, new RegExp(`^ {2}turn ${f.turn}: `));
    const [spec] = diagnosticSpecs([f], doc.findingLines, report.integrityOk);
    assert.equal(spec!.severity, 'error');
    assert.equal(spec!.repairable, true);
  });

  it('offers no Quick Fix for a kind reported only, nor for anything in a file that failed integrity_check', () => {
    const empty = check('empty-main').report;
    assert.deepEqual(
      diagnosticSpecs(empty.findings, [0], empty.integrityOk).map((s) => [s.severity, s.repairable]),
      [['error', false]],
    );
    const damaged = check('integrity-check').report;
    assert.equal(damaged.integrityOk, false);
    const specs = diagnosticSpecs(damaged.findings, [], damaged.integrityOk);
    assert.ok(specs.length > 0);
    assert.ok(specs.every((s) => s.severity === 'error' && !s.repairable && s.line === 0));
    // Even a repairable kind gets none in a damaged file, nor a finding its check marks as left alone.
    const usage: Finding = { kind: 'orphan-usage', session: 's', detail: 'd' };
    assert.equal(diagnosticSpecs([usage], [0], false)[0]!.repairable, false);
    assert.equal(diagnosticSpecs([usage], [0], true)[0]!.repairable, true);
    assert.equal(diagnosticSpecs([{ ...usage, repairable: false }], [0], true)[0]!.repairable, false);
  });

  it('a kind this build does not list still gets a diagnostic: a warning linked to its section, no Quick Fix', () => {
    const f = { kind: 'some-new-kind' as FindingKind, session: 's', branch: 'main', detail: 'seen' };
    const doc = doctorDocument([{ branchId: 'main', turnCount: 0, turns: [] }], [f], words);
    assert.equal(lineOf(doc.text, doc.findingLines[0]!), 'branch main (0)');
    const [spec] = diagnosticSpecs([f], doc.findingLines, true);
    assert.deepEqual([spec!.severity, spec!.repairable, spec!.code.value], ['warning', false, 'some-new-kind']);
    assert.ok(spec!.code.target.endsWith('#some-new-kind'));
  });

  it('lists at most MAX_TURNS_PER_BRANCH turns of a branch, counts the rest, and still lists a turn a finding names', () => {
    const turns = Array.from({ length: MAX_TURNS_PER_BRANCH + 1 }, (_, i) => ({ turn: i + 1, preview: `message ${i + 1}` }));
    turns.push({ turn: 500, preview: 'late\nturn' });
    const branch: DocBranch = { branchId: 'long', turnCount: 1000, turns };
    const f: Finding = { kind: 'orphan-usage', session: 's', branch: 'long', turn: 500, detail: 'd' };
    const doc = doctorDocument([branch], [f], words);
    const lines = doc.text.split('\n');
    assert.equal(lines.filter((l) => l.startsWith('  turn ')).length, MAX_TURNS_PER_BRANCH + 1);
    assert.equal(lineOf(doc.text, doc.findingLines[0]!), '  turn 500: late turn');
    assert.ok(lines.includes(`  +${1000 - MAX_TURNS_PER_BRANCH} turns`));
    assert.ok(!lines.includes(`  turn ${MAX_TURNS_PER_BRANCH + 1}: message ${MAX_TURNS_PER_BRANCH + 1}`));
  });

  it('puts a finding with no branch on the header, and one on a branch the session lacks on a line of its own', () => {
    const doc = doctorDocument(
      [{ branchId: 'main', turnCount: 1, turns: [{ turn: 1, preview: 'hi' }] }],
      [
        { kind: 'orphan-messages', session: 's', detail: 'd' },
        { kind: 'orphan-usage', session: 's', branch: 'gone', turn: 2, detail: 'd' },
      ],
      words,
    );
    assert.equal(doc.findingLines[0], 0);
    assert.equal(lineOf(doc.text, doc.findingLines[1]!), '  turn 2 (not held)');
    assert.equal(lineOf(doc.text, doc.findingLines[1]! - 1), 'branch gone (no rows)');
  });

  it("cuts a preview to one line, and names a finding's rows and repair target", () => {
    assert.equal(oneLinePreview('a\r\n\tb'), 'a b');
    assert.equal([...oneLinePreview('x'.repeat(200))].length, 80);
    const f: Finding = {
      kind: 'orphan-messages',
      session: 'alice',
      rows: { agent_messages: [9, 10], turn_usage: [4] },
      detail: 'd',
    };
    assert.deepEqual(rowLines(f), ['agent_messages rows 9, 10', 'turn_usage row 4']);
    assert.deepEqual(targetOf(f), { kind: 'orphan-messages', session: 'alice' });
    assert.deepEqual(targetOf({ ...f, branch: 'fresh', turn: 0 }), { kind: 'orphan-messages', session: 'alice', branch: 'fresh', turn: 0 });
  });
});
