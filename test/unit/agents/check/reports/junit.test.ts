/**
 * The JUnit report, read back by a strict XML 1.0 reader (test/support/strictXml.ts): suites per session branch,
 * cases with their failures, errors and skips, times in seconds, graders as properties; and untrusted text — markup,
 * `]]>`, control characters, lone surrogates, line breaks in a message — that leaves the file well-formed and reads
 * back as what was meant.
 */
import { strict as assert } from 'node:assert';
import type { CaseResult, CheckReport, GraderResult } from '../../../../../src/agents/check/checkTypes';
import { junitReport, xmlSafe } from '../../../../../src/agents/check/reports/junit';
import { parseStrictXml, type XmlElement } from '../../../../support/strictXml';
import { weatherCase, weatherRun } from '../checkKit';
import { parse as parseJUnit } from 'junit2json';

const grade = (grader: string, pass: boolean, reason: string): GraderResult => ({ grader, pass, score: pass ? 1 : 0, reason });

function result(
  sessionId: string,
  branchId: string,
  turn: number,
  status: CaseResult['status'],
  graders: GraderResult[],
  error: string | null = null,
): CaseResult {
  return {
    case: weatherCase({ id: `${sessionId}/${branchId}/${turn}`, sessionId, branchId, turn }),
    status,
    graders,
    run:
      status === 'orphaned' || status === 'error'
        ? null
        : weatherRun({ usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedTokens: 0, reasoningTokens: 0 } }),
    error,
    ms: 1500,
  };
}

const NASTY = 'evil ]]> <b>&amp;</b> "quoted" \'single\' \u0001\u001b[31m\ud800 end\nsecond line';

function sample(): CheckReport {
  return {
    file: '/work/demo.db',
    graders: ['trajectory', 'answer:normalized'],
    startedAt: '2026-12-05T03:00:00.000Z',
    ms: 4321,
    results: [
      result('sess-1', 'main', 2, 'pass', [grade('trajectory', true, '1 tool call as recorded'), grade('answer:normalized', true, 'same')]),
      result('sess-1', 'main', 4, 'fail', [
        grade('trajectory', false, 'diverged at step 1: search_web instead of get_weather'),
        grade('answer:normalized', false, NASTY),
      ]),
      result('sess-2', 'retry', 1, 'error', [], `The grader command exited with code 1; its stderr ends: ${NASTY}`),
      result('sess-2', 'retry', 3, 'orphaned', []),
    ],
  };
}

const child = (e: XmlElement, name: string) => e.children.filter((c) => c.name === name);
const props = (e: XmlElement) =>
  Object.fromEntries(child(child(e, 'properties')[0]!, 'property').map((p) => [p.attributes.name!, p.attributes.value!]));

describe('JUnit report', () => {
  it('reads back as testsuites of testcases with failures, errors, skips, times and properties', () => {
    const root = parseStrictXml(junitReport(sample()));
    assert.equal(root.name, 'testsuites');
    assert.deepEqual(
      { ...root.attributes },
      {
        name: 'agent-sessions check',
        tests: '4',
        failures: '1',
        errors: '1',
        skipped: '1',
        time: '4.321',
        timestamp: '2026-12-05T03:00:00.000Z',
      },
    );
    const suites = child(root, 'testsuite');
    assert.deepEqual(
      suites.map((s) => [
        s.attributes.name,
        s.attributes.tests,
        s.attributes.failures,
        s.attributes.errors,
        s.attributes.skipped,
        s.attributes.time,
      ]),
      [
        ['sess-1/main', '2', '1', '0', '0', '3.000'],
        ['sess-2/retry', '2', '0', '1', '1', '3.000'],
      ],
    );
    assert.deepEqual(props(suites[0]!), { file: '/work/demo.db', graders: 'trajectory, answer:normalized' });
    const [passed, failed] = child(suites[0]!, 'testcase');
    assert.deepEqual({ ...passed!.attributes }, { classname: 'sess-1/main', name: 'turn 2', time: '1.500' });
    assert.deepEqual(
      passed!.children.map((c) => c.name),
      ['properties', 'system-out'],
    );
    assert.equal(props(passed!)['grader:trajectory'], 'pass 1.00: 1 tool call as recorded');
    assert.equal(props(passed!).tokens, '15');

    const failure = child(failed!, 'failure')[0]!;
    assert.equal(failure.attributes.type, 'fail');
    assert.ok(
      failure.attributes.message!.startsWith(
        'trajectory: diverged at step 1: search_web instead of get_weather; answer:normalized: evil ]]> <b>&amp;</b>',
      ),
    );
    assert.equal(failure.text.split('\n')[0], 'trajectory: diverged at step 1: search_web instead of get_weather');

    const [errored, orphaned] = child(suites[1]!, 'testcase');
    assert.match(child(errored!, 'error')[0]!.attributes.message!, /^The grader command exited with code 1/);
    assert.equal(child(errored!, 'system-out').length, 0, 'no run, no output');
    assert.match(child(orphaned!, 'skipped')[0]!.attributes.message!, /^orphaned: /);
  });

  it('an interrupted check ends with an errored case saying how many did not finish, counted in the totals', () => {
    const passing: CheckReport = { ...sample(), results: [sample().results[0]!] };
    const root = parseStrictXml(junitReport(passing, { finished: 1, total: 4 }));
    assert.deepEqual(
      [root.attributes.tests, root.attributes.failures, root.attributes.errors],
      ['2', '0', '1'],
      'a partial check does not pass in CI',
    );
    const last = child(root, 'testsuite').at(-1)!;
    assert.equal(last.attributes.name, 'interrupted');
    const error = child(child(last, 'testcase')[0]!, 'error')[0]!;
    assert.equal(error.attributes.message, 'the check was interrupted: 3 of 4 cases did not finish');
    assert.equal(parseStrictXml(junitReport(passing)).attributes.errors, '0', 'a whole check has no such case');
  });

  it('a check in which no case ran (every case orphaned) has an errored case: it exits 1, so CI must not pass it', () => {
    const orphans: CheckReport = {
      ...sample(),
      results: [sample().results[3]!, { ...sample().results[3]!, case: weatherCase({ turn: 5 }) }],
    };
    const root = parseStrictXml(junitReport(orphans));
    assert.deepEqual(
      [root.attributes.tests, root.attributes.failures, root.attributes.errors, root.attributes.skipped],
      ['3', '0', '1', '2'],
    );
    const last = child(root, 'testsuite').at(-1)!;
    assert.equal(last.attributes.name, 'nothing checked');
    const error = child(child(last, 'testcase')[0]!, 'error')[0]!;
    assert.match(error.attributes.message!, /^no case ran: all 2 cases are orphaned/);
  });

  it('reads back through junit2json, as CI report tools read JUnit files', async () => {
    const read = (await parseJUnit(junitReport(sample()))) as {
      tests?: number;
      failures?: number;
      errors?: number;
      testsuite?: {
        name?: string;
        testcase?: { name?: string; failure?: { message?: string }[]; skipped?: unknown[]; error?: unknown[] }[];
      }[];
    };
    assert.deepEqual([read.tests, read.failures, read.errors], [4, 1, 1]);
    assert.deepEqual(
      read.testsuite?.map((s) => s.name),
      ['sess-1/main', 'sess-2/retry'],
    );
    assert.ok(read.testsuite?.[0]?.testcase?.[1]?.failure?.[0]?.message?.startsWith('trajectory: diverged at step 1'));
    assert.ok(read.testsuite?.[1]?.testcase?.[0]?.error, 'the error case');
    assert.ok(read.testsuite?.[1]?.testcase?.[1]?.skipped, 'the orphaned case is skipped');
  });

  it('keeps untrusted text well-formed and readable: markup, ]]>, quotes, line breaks; what XML cannot hold as \\uXXXX', () => {
    const xml = junitReport(sample());
    assert.ok(!xml.includes(']]>'), 'no ]]> anywhere');
    const root = parseStrictXml(xml);
    const failed = child(child(root, 'testsuite')[0]!, 'testcase')[1]!;
    const expected = 'evil ]]> <b>&amp;</b> "quoted" \'single\' \\u0001\\u001b[31m\\ud800 end\nsecond line';
    assert.equal(props(failed)['grader:answer:normalized'], `fail 0.00: ${expected}`);
    assert.ok(child(failed, 'failure')[0]!.attributes.message!.endsWith(expected), 'the line break survives in the attribute');
    assert.equal(child(failed, 'failure')[0]!.text.split('\n').slice(1).join('\n'), `answer:normalized: ${expected}`);
    // A surrogate pair is a character, not a lone half.
    assert.equal(xmlSafe('ok 😀 \ud83d'), 'ok 😀 \\ud83d');
  });

  it('the strict reader itself refuses what a conforming parser refuses', () => {
    for (const bad of [
      '<a>\u0001</a>',
      '<a>]]></a>',
      '<a x="1" x="2"/>',
      '<a><b></a></b>',
      '<a>&nbsp;</a>',
      '<a>&#1;</a>',
      '<a/><b/>',
      '<a x=1/>',
      '<a>1 < 2</a>',
    ])
      assert.throws(() => parseStrictXml(bad), Error, bad);
  });
});
