/**
 * Running a check (src/agents/check/checkRun.ts) with a scripted agent command (a real child process writing through
 * our store, checkAgentKit.ts): a faithful agent passes, a regressed one fails the right cases with the graders'
 * reasons; the user's file is never written (byte for byte, and its time) unless branches are kept; at most
 * `concurrency` cases run at once; an abort stops the running cases and keeps the finished ones.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { selectCases } from '../../../../src/agents/check/checkCases';
import { runCheck, type CheckRunOptions } from '../../../../src/agents/check/checkRun';
import type { CaseResult, Grader } from '../../../../src/agents/check/checkTypes';
import { AnswerGrader } from '../../../../src/agents/check/graders/answerGraders';
import { TrajectoryGrader } from '../../../../src/agents/check/graders/trajectoryGrader';
import { junitReport } from '../../../../src/agents/check/reports/junit';
import { markdownReport } from '../../../../src/agents/check/reports/markdown';
import { caseLines } from '../../../../src/cli/checkLines';
import { runningCommandCount } from '../../../../src/agents/command/commandProcess';
import { runCommandOnBranch } from '../../../../src/agents/command/commandRun';
import { IN_THREAD_STORE, type RunStore } from '../../../../src/agents/runSession';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { ExperimentStore } from '../../../../src/store/experiments/experimentStore';
import { tempDir } from '../../../support/tempFiles';
import { snapshot, startAgUiServer } from '../command/commandKit';
import { FAITHFUL, TEST_GRADERS, checkAgent, seedCheckSession, seedReviews, type Reply } from './checkAgentKit';

describe('running a check (scripted agent command, real processes)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-check-run-');
  let file: string;
  let scratchParent: string;
  let db: SessionDatabase;
  let options: Pick<CheckRunOptions, 'file' | 'db' | 'cases' | 'orphaned' | 'graders' | 'scratchParent' | 'run'>;
  let n = 0;

  beforeEach(async () => {
    const dir = join(tmp.dir, `case-${++n}`);
    mkdirSync(dir);
    file = join(dir, 'conversations.db');
    await seedCheckSession(file);
    const reviews = join(dir, 'reviews.db');
    await seedReviews(reviews, file);
    const r = ReviewStore.open(reviews, { readonly: true });
    const data = r.exportData();
    r.close();
    db = openSessionDatabase(file, { readonly: true });
    const selection = await selectCases(db, data);
    scratchParent = join(dir, 'scratch');
    mkdirSync(scratchParent);
    options = {
      file,
      db,
      cases: selection.cases,
      orphaned: selection.orphaned,
      graders: TEST_GRADERS,
      scratchParent,
      run: { graceMs: 300, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } },
    };
  });
  afterEach(() => db.close());
  after(() => tmp.cleanup());

  const agent = (name: string, replies: Record<string, Reply>, trace?: string) =>
    ({ kind: 'command', name, command: checkAgent(join(tmp.dir, `case-${n}`), name, replies, trace), cwd: process.cwd() }) as const;
  const lines = (results: CaseResult[]) =>
    results.map((r) => `${r.status} ${r.case.id} ${r.graders.map((g) => `${g.grader}:${g.pass ? 'ok' : g.reason}`).join(' | ')}`);

  it('a faithful agent passes every case; the user file is byte-identical, its time unchanged, no scratch file left', async () => {
    const bytes = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    const streamed: string[] = [];
    const { report, interrupted } = await runCheck({
      ...options,
      agent: agent('faithful', FAITHFUL),
      onResult: (r) => streamed.push(r.case.id),
    });
    assert.equal(interrupted, false);
    assert.deepEqual(lines(report.results), [
      'orphaned s1/main/9 ',
      'pass s1/main/2 tools:ok | answer:ok',
      'pass s1/main/3 tools:ok | answer:ok',
      // The bad turn's case: no calls to expect (the tools grader gives no result), not the rejected answer, the
      // correction.
      'pass s1/main/4 not-rejected:ok | answer:ok',
    ]);
    // Each result was handed over as it finished, the orphan first.
    assert.equal(streamed[0], 's1/main/9');
    assert.deepEqual([...streamed].sort(), ['s1/main/2', 's1/main/3', 's1/main/4', 's1/main/9']);
    const paris = report.results[1]!;
    assert.deepEqual(paris.run!.trajectory, [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: 'Paris: 18°C, sunny' }]);
    assert.equal(paris.run!.answer, 'Sunny in Paris, 18°C.');
    assert.equal(paris.run!.usage?.totalTokens, 40);
    assert.equal(paris.run!.branchId, null);
    // The replay summary names the case's own turn as its source, and the call as replayed.
    assert.deepEqual(paris.run!.replay?.source, { branchId: 'main', turn: 2 });
    assert.deepEqual(
      paris.run!.replay?.marks.map((m) => [m.name, m.outcome]),
      [['get_weather', 'replayed']],
    );
    assert.deepEqual(report.graders, ['tools', 'answer']);
    assert.ok(readFileSync(file).equals(bytes), 'the session file changed');
    assert.equal(statSync(file).mtimeMs, mtime);
    assert.deepEqual(readdirSync(scratchParent), []);
  });

  it("an agent's run hands the check its items exactly as stored, so the check need not read the branch again", async () => {
    const handed: unknown[][] = [];
    const outcome = await runCommandOnBranch({
      ...options.run,
      dbPath: file,
      sessionId: 's1',
      fork: { fromTurn: 3, name: 'again' },
      agent: agent('faithful', FAITHFUL),
      input: 'Weather in Lyon?',
      onStored: (items) => void handed.push([...items]),
    });
    assert.equal(outcome.kind, 'run/completed', outcome.kind === 'run/failed' ? outcome.message : '');
    const reader = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, readonly: true });
    try {
      const turn = await reader.getTurnStoredItems(3, 'again');
      assert.deepEqual(
        turn.map((i) => (i as { type?: string }).type ?? (i as { role?: string }).role),
        ['user', 'function_call', 'function_call_output', 'message'],
      );
      assert.deepEqual(handed, [turn]);
    } finally {
      reader.close();
    }
  });

  it('a regressed agent (another tool, other arguments, another answer) fails the right cases with the reasons', async () => {
    const regressed: Record<string, Reply> = {
      ...FAITHFUL,
      'Weather in Paris?': { calls: [{ name: 'get_forecast', arguments: '{"city":"Paris"}' }], answer: 'Sunny in Paris, 18°C.' },
      'Weather in Lyon?': { calls: [{ name: 'get_weather', arguments: '{"city":"Lyons"}' }], answer: 'Rain in Lyon, 12°C.' },
      'Mail Ana the forecast': { calls: [{ name: 'post_slack', arguments: '{"to":"ana"}' }], answer: 'Posted.' },
    };
    const { report } = await runCheck({ ...options, agent: agent('regressed', regressed) });
    assert.deepEqual(lines(report.results), [
      'orphaned s1/main/9 ',
      'fail s1/main/2 tools:expected [get_weather], got [get_forecast] | answer:ok',
      // Other arguments: the names still agree (the tests' grader compares names); the call ran live, not replayed.
      'pass s1/main/3 tools:ok | answer:ok',
      // The bad turn's recorded calls are no reference (the tools grader gives no result): its answer fails it.
      'fail s1/main/4 not-rejected:ok | answer:expected "I sent Ana the forecast.", got "Posted."',
    ]);
    const lyon = report.results[2]!.run!;
    assert.deepEqual(lyon.trajectory, [{ name: 'get_weather', arguments: '{"city":"Lyons"}', output: 'get_weather ran live' }]);
    assert.deepEqual(
      lyon.replay?.marks.map((m) => m.outcome),
      ['live'],
    );
  });

  it("a key the agent wrote into its answer or a call's arguments never reaches the results, graded or not", async () => {
    // Not shaped like an OpenAI key (no sk- prefix): only the key's own value can find it.
    const key = 'proj-SECRETabcdef1234567890XYZ';
    const leaky: Record<string, Reply> = {
      ...FAITHFUL,
      'Weather in Lyon?': { calls: [{ name: 'get_weather', arguments: JSON.stringify({ city: key }) }], answer: `my key is ${key}` },
    };
    const { report } = await runCheck({
      ...options,
      run: { ...options.run, env: { ...options.run!.env, OPENAI_API_KEY: key } },
      agent: agent('leaky', leaky),
    });
    const everything = JSON.stringify(report);
    assert.ok(!everything.includes(key) && !everything.toLowerCase().includes(key.toLowerCase()), 'the key is in the report');
    const lyon = report.results.find((r) => r.case.id === 's1/main/3')!;
    assert.equal(lyon.run?.answer, 'my key is [redacted]');
    assert.deepEqual(
      lyon.run?.trajectory.map((t) => t.arguments),
      ['{"city":"[redacted]"}'],
    );
    assert.match(lyon.graders.map((g) => g.reason).join(' '), /\[redacted\]/);
  });

  it("what a grader says (a grader's own key, its stderr, a reason) reaches no result unredacted", async () => {
    const key = 'proj-GRADERSECRET-1234567890XYZ';
    const leaking: Grader = {
      name: 'leaking',
      grade: () => Promise.resolve({ grader: 'leaking', pass: false, score: 0, reason: `auth failed for key ${key}` }),
    };
    const throwing: Grader = {
      name: 'throwing',
      grade: () => Promise.reject(new Error(`the judge refused ${key}`)),
    };
    for (const graders of [[leaking], [throwing]]) {
      const { report } = await runCheck({
        ...options,
        cases: options.cases.slice(0, 1),
        orphaned: [],
        graders,
        run: { ...options.run, env: { ...options.run!.env, OPENAI_API_KEY: key } },
        agent: agent('faithful', FAITHFUL),
      });
      const everything = JSON.stringify(report);
      assert.ok(!everything.includes('GRADERSECRET'), everything);
      assert.match(everything, /\[redacted\]/);
    }
  });

  it('trajectory graders see every call of the turn: an MCP call the agent added fails trajectory:args', async () => {
    const refund = {
      type: 'mcp_call',
      id: 'mcp_9',
      server_label: 'billing',
      name: 'delete_account',
      arguments: '{"user": 1}',
      output: 'deleted',
    };
    const { report } = await runCheck({
      ...options,
      cases: options.cases.slice(0, 1),
      orphaned: [],
      graders: [new TrajectoryGrader(true), new TrajectoryGrader(false)],
      agent: agent('mcp', { ...FAITHFUL, 'Weather in Paris?': { ...FAITHFUL['Weather in Paris?']!, raw: [refund] } }),
    });
    const paris = report.results[0]!;
    assert.deepEqual(paris.run!.trajectory, [
      { name: 'get_weather', arguments: '{"city":"Paris"}', output: 'Paris: 18°C, sunny' },
      { name: 'mcp_call billing.delete_account', arguments: '{"user": 1}', output: 'deleted' },
    ]);
    assert.equal(paris.status, 'fail');
    assert.deepEqual(
      paris.graders.map((g) => [g.grader, g.pass, g.reason]),
      [
        [
          'trajectory:args',
          false,
          "diverged at step 2: this run called mcp_call billing.delete_account past the recording's calls (recorded 1 call, this run 2)",
        ],
        [
          'trajectory',
          false,
          "diverged at step 2: this run called mcp_call billing.delete_account past the recording's calls (recorded 1 call, this run 2)",
        ],
      ],
    );
  });

  it('a run that stored no answer is an ERROR whatever the graders say (a turn of only the user message passed)', async () => {
    const always: Grader = { name: 'always', grade: () => Promise.resolve({ grader: 'always', pass: true, score: 1, reason: 'ok' }) };
    const { report } = await runCheck({
      ...options,
      cases: options.cases.slice(0, 1),
      orphaned: [],
      graders: [always],
      agent: agent('silent', { 'Weather in Paris?': { answer: '', noAnswer: true } }),
    });
    assert.deepEqual(
      report.results.map((r) => [r.status, r.error]),
      [['error', 'The agent wrote no answer: its turn holds no assistant message with text (nothing to grade).']],
    );
  });

  it('a bad turn’s run that repeats the answer reviewed as bad fails, whatever the graders; every report names not-rejected', async () => {
    // The agent makes the recorded call again and answers as the turn reviewed bad did ("Done!!"), in other case and
    // spacing: graded by its calls alone (and a grader that passes everything), it would pass.
    const unfixed: Record<string, Reply> = {
      ...FAITHFUL,
      'Mail Ana the forecast': { calls: [{ name: 'send_email', arguments: '{"to":"ana@example.com"}' }], answer: '  DONE!!\n' },
    };
    const asked: string[] = [];
    const always: Grader = {
      name: 'always',
      grade: (c) => {
        asked.push(c.id);
        return Promise.resolve({ grader: 'always', pass: true, score: 1, reason: 'ok' });
      },
    };
    const { report } = await runCheck({ ...options, graders: [new TrajectoryGrader(true), always], agent: agent('unfixed', unfixed) });
    const why = 'repeats the answer reviewed as bad (the same text, ignoring case and whitespace)';
    assert.deepEqual(lines(report.results), [
      'orphaned s1/main/9 ',
      'pass s1/main/2 trajectory:args:ok | always:ok',
      'pass s1/main/3 trajectory:args:ok | always:ok',
      `fail s1/main/4 not-rejected:${why}`,
    ]);
    // The graders are not asked of a run that failed on that alone.
    assert.deepEqual(asked.sort(), ['s1/main/2', 's1/main/3']);
    const mail = report.results[3]!;
    assert.deepEqual(mail.graders, [{ grader: 'not-rejected', pass: false, score: 0, reason: why }]);
    assert.equal(mail.run?.answer, '  DONE!!\n');

    // Every report says so, by the rule's name; none quotes the rejected answer ("Done!!", as recorded).
    const junit = junitReport(report);
    assert.match(junit, /<testsuites name="agent-sessions check" tests="4" failures="1" errors="0" skipped="1"/);
    assert.ok(junit.includes(`<property name="grader:not-rejected" value="fail 0.00: ${why}"/>`), junit);
    assert.ok(junit.includes(`<failure message="not-rejected: ${why}" type="fail">not-rejected: ${why}</failure>`), junit);
    const markdown = markdownReport(report);
    assert.ok(markdown.includes(`| s1/main turn 4 | bad | ❌ fail | not\\-rejected: ${why.replace(/[()]/g, (c) => `\\${c}`)} |`), markdown);
    const cli = caseLines(mail, false).replace(/\d+\.\d s/, 'T s');
    assert.equal(cli, `FAIL s1/main/4  not-rejected ✗  40 tok  T s\n    not-rejected: ${why}\n`);
    for (const text of [junit, markdown, cli]) assert.ok(!text.includes('Done!!'), text);
    // The experiment store keeps it as the case's grade.
    const experiments = ExperimentStore.open(join(tmp.dir, `case-${n}`, 'reviews.experiments.db'));
    try {
      experiments.saveExperiment('unfixed', report);
      const saved = experiments.getExperiment('unfixed')!.cases.find((c) => c.caseId === 's1/main/4')!;
      assert.deepEqual([saved.status, saved.grades], ['fail', [{ grader: 'not-rejected', pass: false, score: 0, reason: why }]]);
    } finally {
      experiments.close();
    }
  });

  it('a rejected answer holding a key is compared and reported redacted, as the run is: the repeat is caught', async () => {
    // Not shaped like an OpenAI key (no sk- prefix): only the key's own value can find it.
    const key = 'proj-REJECTEDabcdef1234567890XYZ';
    db.close();
    const w = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file });
    await w.addItems([
      { role: 'user', content: 'Which key do I use?' },
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `Use ${key}.` }] },
    ] as never);
    const answer = (await w.getTurnStoredItems(5)).find((i) => (i as { role?: string }).role === 'assistant');
    w.close();
    const store = ReviewStore.open(join(tmp.dir, `case-${n}`, 'reviews.db'));
    const ref = { sessionId: 's1', branchId: 'main', turn: 5, turnKey: contentKey({ role: 'user', content: 'Which key do I use?' }) };
    store.setTurnReview(ref, { verdict: 'bad', note: 'leaks the key' });
    store.setCorrection({ ...ref, itemKey: contentKey(answer), text: 'I cannot share keys.' });
    const data = store.exportData();
    store.close();
    db = openSessionDatabase(file, { readonly: true });
    const cases = (await selectCases(db, data)).cases.filter((c) => c.turn === 5);
    assert.equal(cases[0]?.expected.rejected, `Use ${key}.`);

    const { report } = await runCheck({
      ...options,
      db,
      cases,
      orphaned: [],
      graders: [new TrajectoryGrader(false)],
      run: { ...options.run, env: { ...options.run!.env, OPENAI_API_KEY: key } },
      agent: agent('leaky', { 'Which key do I use?': { answer: `use ${key}.` } }),
    });
    const [r] = report.results;
    assert.deepEqual([r!.status, r!.graders.map((g) => g.grader), r!.run?.answer], ['fail', ['not-rejected'], 'use [redacted].']);
    // The case a result holds (which --json prints) has the rejected answer redacted; the case given is unchanged.
    assert.equal(r!.case.expected.rejected, 'Use [redacted].');
    assert.equal(cases[0]!.expected.rejected, `Use ${key}.`);
    assert.ok(!JSON.stringify(report).includes('REJECTED'), JSON.stringify(report));
  });

  /**
   * Adds turn 5 to the session (the user's `question`, then `items`), reviewed bad with a correction `text` of its
   * item `corrected` (an index into `items`); returns its case, the file's db reopened.
   */
  async function badTurn(question: string, items: unknown[], corrected: number, text: string) {
    db.close();
    const w = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file });
    await w.addItems([{ role: 'user', content: question }, ...items] as never);
    const stored = (await w.getTurnStoredItems(5)).slice(1);
    w.close();
    const store = ReviewStore.open(join(tmp.dir, `case-${n}`, 'reviews.db'));
    const ref = { sessionId: 's1', branchId: 'main', turn: 5, turnKey: contentKey({ role: 'user', content: question }) };
    store.setTurnReview(ref, { verdict: 'bad' });
    store.setCorrection({ ...ref, itemKey: contentKey(stored[corrected]), text });
    const data = store.exportData();
    store.close();
    db = openSessionDatabase(file, { readonly: true });
    return (await selectCases(db, data)).cases.filter((c) => c.turn === 5);
  }

  it('a bad turn whose wrong call made the wrong answer: the fixed agent, calling otherwise, passes trajectory:args', async () => {
    // Recorded: the weather of Lisbon when the user asked about Paris, and an answer from it, reviewed bad.
    const cases = await badTurn(
      'Do I need an umbrella in Paris?',
      [
        { type: 'function_call', call_id: 'c_w', name: 'get_weather', arguments: '{"city":"Lisbon"}', status: 'completed' },
        { type: 'function_call_output', call_id: 'c_w', output: 'Lisbon: 24°C, sunny' },
        { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'No umbrella needed: sunny.' }] },
      ],
      2,
      'Take an umbrella: light rain in Paris.',
    );
    // The case expects the correction, not the answer reviewed bad, and no calls: Lisbon's call is no reference.
    assert.deepEqual(cases[0]!.expected, {
      answer: 'Take an umbrella: light rain in Paris.',
      trajectory: null,
      rejected: 'No umbrella needed: sunny.',
    });
    // Fixed: the right call (Paris, not in the recording: run live) and the correction's answer.
    const fixed = agent('fixed', {
      'Do I need an umbrella in Paris?': {
        calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
        answer: 'Take an umbrella: light rain in Paris.',
      },
    });
    const { report } = await runCheck({ ...options, db, cases, orphaned: [], graders: [new TrajectoryGrader(true)], agent: fixed });
    const [r] = report.results;
    const kept = { grader: 'not-rejected', pass: true, score: 1, reason: 'the answer differs from the one reviewed as bad' };
    // Before: FAIL, trajectory:args: diverged at step 1: get_weather with other arguments (city: "Lisbon" → "Paris").
    assert.deepEqual([r!.status, r!.graders, r!.error], ['pass', [kept], null]);
    assert.deepEqual(
      r!.run!.trajectory.map((t) => t.arguments),
      ['{"city":"Paris"}'],
    );
    // Every report shows the rule's pass as its result (never a case passed with none); trajectory:args still ran.
    assert.equal(caseLines(r!, false).replace(/\d+\.\d s/, 'T s'), 'PASS s1/main/5  not-rejected ✓  40 tok  T s\n');
    const junit = junitReport(report);
    assert.match(junit, /<testsuites name="agent-sessions check" tests="1" failures="0" errors="0" skipped="0"/);
    assert.ok(junit.includes(`<property name="grader:not-rejected" value="pass 1.00: ${kept.reason}"/>`), junit);
    assert.ok(junit.includes('<property name="graders" value="trajectory:args"/>'), junit);
    assert.match(markdownReport(report), /^### ✅ Agent check: 1 passed, 0 failed\n\n1 case in \d+\.\d s · graders: trajectory:args\n$/);
    // --json: the case says it expects no trajectory.
    const json = JSON.parse(JSON.stringify(report)) as typeof report;
    assert.equal(json.results[0]!.case.expected.trajectory, null);

    // With an answer grader too: both results, the rule's first.
    const both = await runCheck({
      ...options,
      db,
      cases,
      orphaned: [],
      graders: [new TrajectoryGrader(true), new AnswerGrader('normalized')],
      agent: fixed,
    });
    assert.deepEqual(lines(both.report.results), ['pass s1/main/5 not-rejected:ok | answer:normalized:ok']);

    // Saved, and compared with an experiment saved before bad turns lost their trajectory, in which this case failed
    // trajectory:args on Lisbon's call: a fix, with the old reason; one in which it passed it: unchanged.
    const experiments = ExperimentStore.open(join(tmp.dir, `case-${n}`, 'reviews.experiments.db'));
    try {
      const diverged = {
        grader: 'trajectory:args',
        pass: false,
        score: 0,
        reason: 'diverged at step 1: get_weather with other arguments (city: "Lisbon" → "Paris")',
      };
      const old = (status: 'pass' | 'fail', grade: typeof diverged) => ({
        ...report,
        results: [{ ...r!, status, graders: [grade] }],
      });
      experiments.saveExperiment('old-fail', old('fail', diverged));
      experiments.saveExperiment('old-pass', old('pass', { ...diverged, pass: true, score: 1, reason: '1 tool call as recorded' }));
      experiments.saveExperiment('now', report);
      assert.deepEqual(experiments.getExperiment('now')!.cases[0]!.grades, [kept]);
      const fix = experiments.compareWithBaseline('old-fail', report);
      assert.deepEqual(
        [fix.flips, fix.unchanged],
        [[{ kind: 'fix', caseId: 's1/main/5', before: 'fail', after: 'pass', reason: `trajectory:args: ${diverged.reason}` }], 0],
      );
      const same = experiments.compareWithBaseline('old-pass', report);
      assert.deepEqual([same.flips, same.unchanged], [[], 1]);
    } finally {
      experiments.close();
    }
  });

  it('a case no grader judged is an ERROR, never a pass: a bad case with nothing to compare graded by its calls, no graders', async () => {
    // The correction was made on an answer that holds no text: the rule has nothing to compare, and the bad turn's
    // case expects no calls, so trajectory gives it no result either.
    const cases = await badTurn(
      'Weather in Oslo?',
      [
        { type: 'function_call', call_id: 'c_o', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
        { type: 'function_call_output', call_id: 'c_o', output: 'Oslo: 2°C, snow' },
        { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: ' ' }] },
      ],
      2,
      'Snow in Oslo, 2°C.',
    );
    assert.deepEqual([cases[0]!.expected.trajectory, cases[0]!.expected.rejected], [null, null]);
    const oslo = agent('oslo', {
      'Weather in Oslo?': { calls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }], answer: 'Snow in Oslo, 2°C.' },
    });
    const { report } = await runCheck({ ...options, db, cases, orphaned: [], graders: [new TrajectoryGrader(false)], agent: oslo });
    assert.deepEqual(
      report.results.map((x) => [x.status, x.graders, x.error]),
      [
        [
          'error',
          [],
          "No grader judged this case: a bad turn's case expects no calls (its recorded ones were part of the answer " +
            'rejected), so trajectory gave it no result, and its corrected message holds no text for not-rejected to ' +
            'compare. Grade its answer too (answer:…, model, command:…).',
        ],
      ],
    );
    assert.ok(report.results[0]!.run, 'the run is kept');
    // A good case given no grader at all: the same.
    const none = await runCheck({
      ...options,
      db,
      cases: options.cases.slice(0, 1),
      orphaned: [],
      graders: [],
      agent: agent('faithful', FAITHFUL),
    });
    assert.deepEqual(
      none.report.results.map((x) => [x.status, x.error]),
      [['error', 'No grader judged this case: none was given.']],
    );
  });

  it('a run that fails is an error with its message; the other cases still run', async () => {
    const dir = join(tmp.dir, `case-${n}`);
    const { report } = await runCheck({
      ...options,
      cases: options.cases.slice(0, 1),
      orphaned: [],
      agent: {
        kind: 'command',
        name: 'broken',
        command: `"${process.execPath}" -e "console.error('no config'); process.exit(3)"`,
        cwd: dir,
      },
    });
    assert.equal(report.results.length, 1);
    assert.equal(report.results[0]!.status, 'error');
    assert.match(report.results[0]!.error!, /exited with code 3 before sending any event\.\nstderr \(last lines\):\nno config/);
  });

  it("--tools strict: a call off the recording fails that case's run, an ERROR naming the call; the faithful cases pass", async () => {
    const offRecord: Record<string, Reply> = {
      ...FAITHFUL,
      'Weather in Lyon?': { calls: [{ name: 'get_weather', arguments: '{"city":"Lyons"}' }], answer: 'Rain in Lyon, 12°C.' },
    };
    const { report } = await runCheck({ ...options, orphaned: [], tools: { mode: 'strict' }, agent: agent('strict', offRecord) });
    assert.deepEqual(
      report.results.map((r) => [r.case.id, r.status]),
      [
        ['s1/main/2', 'pass'],
        ['s1/main/3', 'error'],
        ['s1/main/4', 'pass'],
      ],
    );
    assert.match(report.results[1]!.error!, /get_weather/);
  });

  it('an agent URL: the same cases through AG-UI over HTTP, each in its scratch file', async () => {
    const { AdvancedSQLiteSession } = await import('../../../../src/store');
    const paths = new Set<string>();
    const server = await startAgUiServer(async (input, send) => {
      const props = (input.forwardedProps as { agentSessions: Record<string, unknown> }).agentSessions as {
        store: { path: string };
        sessionId: string;
        branchId: string;
        fork: { fromTurn: number } | null;
        input: unknown[];
      };
      paths.add(props.store.path);
      const question = (input.messages as { content: string }[])[0]!.content;
      const reply = FAITHFUL[question]!;
      const s = new AdvancedSQLiteSession({ sessionId: props.sessionId, dbPath: props.store.path });
      if (props.fork) await s.createBranchFromTurn(props.fork.fromTurn, props.branchId);
      else await s.switchToBranch(props.branchId);
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      const items: unknown[] = [...props.input];
      for (const [i, c] of (reply.calls ?? []).entries()) {
        items.push({ type: 'function_call', call_id: `u${i}`, name: c.name, arguments: c.arguments, status: 'completed' });
        items.push({ type: 'function_call_output', call_id: `u${i}`, output: 'from the URL agent' });
      }
      items.push({
        role: 'assistant',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', text: reply.answer, annotations: [] }],
      });
      await s.addItems(items as never);
      s.close();
      send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
    });
    try {
      const { report } = await runCheck({ ...options, orphaned: [], agent: { kind: 'url', url: server.url } });
      assert.deepEqual(
        report.results.map((r) => `${r.status} ${r.case.id}`),
        ['pass s1/main/2', 'pass s1/main/3', 'pass s1/main/4'],
      );
      // Every run wrote into a scratch file of its own, never the user's.
      assert.equal(paths.size, 3);
      assert.ok(![...paths].includes(file));
      assert.deepEqual(report.results[0]!.run!.trajectory, [
        { name: 'get_weather', arguments: '{"city":"Paris"}', output: 'from the URL agent' },
      ]);
    } finally {
      await server.close();
    }
  });

  it("a case's copy, fork, settling and reading back share one session of its scratch file", async () => {
    // The store the runs' sessions open through, counting the sessions it opens per scratch file (each a connection of
    // its own): the store's own class does the work.
    const opened: string[] = [];
    const counting: RunStore = {
      ...IN_THREAD_STORE,
      openSession: (o) => (opened.push(basename(o.dbPath ?? '')), IN_THREAD_STORE.openSession(o)),
    };
    const { report } = await runCheck({ ...options, run: { ...options.run, store: counting }, agent: agent('faithful', FAITHFUL) });
    assert.deepEqual(
      report.results.map((r) => r.status),
      ['orphaned', 'pass', 'pass', 'pass'],
    );
    // One session per case: the copy's, handed to the run.
    assert.deepEqual(opened.filter((o) => /^case-\d+\.db$/.test(o)).sort(), ['case-1.db', 'case-2.db', 'case-3.db']);
    assert.deepEqual(readdirSync(scratchParent), []);
  });

  it('runs at most `concurrency` cases at once', async () => {
    const slow: Record<string, Reply> = Object.fromEntries(Object.entries(FAITHFUL).map(([q, r]) => [q, { ...r, delayMs: 700 }]));
    const overlap = async (concurrency: number): Promise<number> => {
      const trace = join(tmp.dir, `case-${n}`, `trace-${concurrency}.txt`);
      const { report } = await runCheck({ ...options, orphaned: [], concurrency, agent: agent(`slow${concurrency}`, slow, trace) });
      assert.deepEqual(
        report.results.map((r) => r.status),
        ['pass', 'pass', 'pass'],
      );
      const events = readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .map(([kind, at]) => ({ d: kind === 'start' ? 1 : -1, at: Number(at) }))
        .sort((a, b) => a.at - b.at || a.d - b.d);
      let now = 0;
      let most = 0;
      for (const e of events) most = Math.max(most, (now += e.d));
      return most;
    };
    assert.equal(await overlap(1), 1);
    assert.equal(await overlap(3), 3);
  });

  it('an abort stops the running cases, starts no other and keeps what finished', async () => {
    const replies: Record<string, Reply> = {
      ...FAITHFUL,
      'Weather in Lyon?': { answer: 'never', hang: true },
      'Mail Ana the forecast': { answer: 'never', hang: true },
    };
    const controller = new AbortController();
    const done: string[] = [];
    const outcome = runCheck({
      ...options,
      concurrency: 2,
      agent: agent('hangs', replies),
      signal: controller.signal,
      onResult: (r) => {
        done.push(r.case.id);
        // Paris has finished: Lyon hangs, Mail hangs once it starts in Paris's place. Stop while they run.
        if (r.case.id === 's1/main/2') setTimeout(() => controller.abort(), 1500);
      },
    });
    const { report, interrupted, unfinished } = await outcome;
    assert.equal(interrupted, true);
    assert.equal(unfinished, 2);
    assert.deepEqual(lines(report.results), ['orphaned s1/main/9 ', 'pass s1/main/2 tools:ok | answer:ok']);
    assert.deepEqual(done, ['s1/main/9', 's1/main/2']);
    assert.equal(runningCommandCount(), 0);
    assert.deepEqual(readdirSync(scratchParent), []);
  });

  it('--keep-branches: each run is a branch check-<n> of the user file; nothing else of it changes', async () => {
    db.close();
    const before = (await snapshot(file)) as Record<string, unknown>;
    db = openSessionDatabase(file, { readonly: true });
    const { report } = await runCheck({ ...options, db, keepBranches: true, agent: agent('faithful', FAITHFUL) });
    assert.deepEqual(
      report.results.map((r) => [r.case.id, r.status, r.run?.branchId ?? null]),
      [
        ['s1/main/9', 'orphaned', null],
        ['s1/main/2', 'pass', 'check-1'],
        ['s1/main/3', 'pass', 'check-2'],
        ['s1/main/4', 'pass', 'check-3'],
      ],
    );
    const after = (await snapshot(file)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(after).sort(), ['check-1', 'check-2', 'check-3', 'main']);
    assert.deepEqual(after.main, before.main);
    assert.deepEqual(report.results[2]!.run!.replay?.source, { branchId: 'main', turn: 3 });
  });
});
