/**
 * `command:"…"`: a grader program of the user's, given the case on stdin. A verdict it prints is the result; one that
 * hangs, crashes or prints garbage makes the case an error that quotes its stderr, and nothing of it keeps running.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandGrader, MAX_GRADER_OUTPUT_CHARS, graderInput } from '../../../../../src/agents/check/graders/commandGrader';
import { GraderError } from '../../../../../src/agents/check/graders/graderErrors';
import { runningCommandCount } from '../../../../../src/agents/command/commandProcess';
import { tempDir } from '../../../../support/tempFiles';
import { never, weatherCase, weatherRun } from '../checkKit';

describe('command grader', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir('asi-grader-')));
  afterEach(() => cleanup());

  /** A node script in the temp folder, and the command line that runs it. */
  const script = (name: string, body: string): string => {
    writeFileSync(join(dir, name), body);
    return `"${process.execPath}" ${name}`;
  };
  const grader = (command: string, timeoutMs?: number) => new CommandGrader(command, { cwd: dir, timeoutMs });
  const fails = (p: Promise<unknown>, pattern: RegExp) =>
    assert.rejects(p, (e: unknown) => e instanceof GraderError && pattern.test(e.message) && !e.message.includes('\n'));

  it('gives the program {case, input, expected, actual, trajectory} and takes its verdict', async () => {
    const cmd = script(
      'grade.js',
      `let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => {
         const x = JSON.parse(s);
         require('fs').writeFileSync('seen.json', s);
         const ok = x.actual.includes('sunny') && x.trajectory[0].name === x.expected.trajectory[0].name;
         console.log(JSON.stringify({ pass: ok, score: ok ? 0.9 : 0.1, reason: ok ? 'mentions the sky' : 'no sky' }));
       });`,
    );
    const pass = await grader(cmd).grade(weatherCase(), weatherRun({ answer: 'sunny, 22' }), never);
    assert.deepEqual(pass, { grader: `command:${JSON.stringify(cmd)}`, pass: true, score: 0.9, reason: 'mentions the sky' });
    const seen = JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(seen), ['case', 'input', 'expected', 'actual', 'trajectory']);
    assert.deepEqual(seen.case, {
      id: 'sess-1/main/2',
      sessionId: 'sess-1',
      branchId: 'main',
      turn: 2,
      verdict: 'good',
      note: null,
      tags: [],
    });
    assert.equal(seen.input, 'What is the weather in Paris?');
    const fail = await grader(cmd).grade(weatherCase(), weatherRun({ answer: 'rain' }), never);
    assert.deepEqual([fail.pass, fail.score, fail.reason], [false, 0.1, 'no sky']);
  });

  it("gives a bad turn's case with no expected trajectory (null), its correction and its rejected answer", () => {
    const bad = weatherCase({ verdict: 'bad', expected: { answer: 'Rain, 12 °C.', trajectory: null, rejected: 'Sunny in Lisbon.' } });
    const x = JSON.parse(graderInput(bad, weatherRun())) as { case: { verdict: string }; expected: unknown; trajectory: unknown[] };
    assert.equal(x.case.verdict, 'bad');
    assert.deepEqual(x.expected, { answer: 'Rain, 12 °C.', trajectory: null, rejected: 'Sunny in Lisbon.' });
    assert.equal(x.trajectory.length, 1, "the run's own calls");
  });

  it('takes the last line as the verdict when the program logs before it, and a score from pass when none is given', async () => {
    const cmd = script('logs.js', `console.log('loading rubric…'); console.log(JSON.stringify({ pass: false }));`);
    const r = await grader(cmd).grade(weatherCase(), weatherRun(), never);
    assert.deepEqual([r.pass, r.score, r.reason], [false, 0, 'failed']);
  });

  it('stops a program that hangs at the timeout: the case errors, nothing keeps running', async () => {
    const cmd = script('hang.js', `console.error('thinking very hard'); setInterval(() => {}, 1000);`);
    const started = Date.now();
    await fails(
      grader(cmd, 500).grade(weatherCase(), weatherRun(), never),
      /gave no verdict within 0\.5 s and was stopped; its stderr ends: thinking very hard/,
    );
    assert.ok(Date.now() - started < 5000, 'stopped promptly');
    assert.equal(runningCommandCount(), 0);
  });

  it('a crash errors the case with the tail of its stderr', async () => {
    const cmd = script(
      'crash.js',
      `for (let i = 0; i < 30; i++) console.error('noise ' + i); console.error('Error: rubric.yaml not found'); process.exit(3);`,
    );
    await fails(
      grader(cmd).grade(weatherCase(), weatherRun(), never),
      /exited with code 3; its stderr ends: .*noise 29 \| Error: rubric\.yaml not found$/,
    );
    // Only the tail: the first lines of noise are gone.
    await assert.rejects(grader(cmd).grade(weatherCase(), weatherRun(), never), (e: Error) => !e.message.includes('noise 0 '));
  });

  it('garbage on stdout errors the case, quoting it: not JSON, not a verdict, a score out of range', async () => {
    const garbage = script('garbage.js', `console.log('PASS!!'); console.error('oops');`);
    await fails(
      grader(garbage).grade(weatherCase(), weatherRun(), never),
      /printed garbage: it printed no JSON verdict: "PASS!!"; its stderr ends: oops/,
    );
    const noPass = script('nopass.js', `console.log(JSON.stringify({ ok: true }));`);
    await fails(grader(noPass).grade(weatherCase(), weatherRun(), never), /its verdict has no boolean "pass"/);
    const score = script('score.js', `console.log(JSON.stringify({ pass: true, score: 7 }));`);
    await fails(grader(score).grade(weatherCase(), weatherRun(), never), /"score" must be a number from 0 to 1: "7"/);
    const silent = script('silent.js', ``);
    await fails(grader(silent).grade(weatherCase(), weatherRun(), never), /printed garbage: it printed nothing/);
  });

  it('bounds what it reads: a program that prints past the bound errors the case', async () => {
    const cmd = script(
      'flood.js',
      `const line = 'x'.repeat(1000); for (let i = 0; i < 200; i++) console.log(line); console.log('{"pass":true}');`,
    );
    await fails(
      grader(cmd).grade(weatherCase(), weatherRun(), never),
      new RegExp(`printed more than ${MAX_GRADER_OUTPUT_CHARS.toLocaleString('en-US')} characters`),
    );
  });

  it('a command that cannot start errors the case; a stop errors it too', async () => {
    await fails(
      grader('definitely-not-a-command-asi').grade(weatherCase(), weatherRun(), never),
      /exited with code 127; its stderr ends: .*not found/,
    );
    const cmd = script('slow.js', `setTimeout(() => console.log('{"pass":true}'), 10000);`);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 200);
    await fails(grader(cmd).grade(weatherCase(), weatherRun(), stop.signal), /was stopped/);
  });

  it('never lets the key it is given out: its stderr, its reason, its output quoted, its name (redacted as an agent is)', async () => {
    const key = 'sk-proj-SECRETSECRET1234567890abcdef';
    const env = { ...process.env, OPENAI_API_KEY: key };
    const keyed = (command: string) => new CommandGrader(command, { cwd: dir, env });
    const leaks = (e: unknown) => e instanceof GraderError && !/SECRETSECRET/.test(e.message) && /\[redacted\]/.test(e.message);
    // Its stderr tail: the key whole, split across two lines, and at the start of the tail (its line cut off).
    const stderr = script(
      'stderr.js',
      `const k = process.env.OPENAI_API_KEY; console.error('auth failed for key ' + k); ` +
        `console.error('again ' + k.slice(0, 12)); console.error(k.slice(12) + ' end'); process.exit(1);`,
    );
    await assert.rejects(keyed(stderr).grade(weatherCase(), weatherRun(), never), leaks);
    const long = script(
      'long.js',
      `console.error('x'.repeat(490) + process.env.OPENAI_API_KEY.slice(0, 3)); console.error(process.env.OPENAI_API_KEY.slice(3)); process.exit(1);`,
    );
    await assert.rejects(
      keyed(long).grade(weatherCase(), weatherRun(), never),
      (e: unknown) => e instanceof GraderError && !/SECRETSE/.test(e.message),
    );
    // A key that does not look like one (no sk-): only the known secret can catch it.
    const plain = 'plainsecretvalue42';
    const viaSecrets = new CommandGrader(script('plain.js', `console.log(JSON.stringify({ pass: false, reason: 'key ' + '${plain}' }));`), {
      cwd: dir,
      secrets: [plain],
    });
    const r = await viaSecrets.grade(weatherCase(), weatherRun(), never);
    assert.equal(r.reason, 'key [redacted]');
    const reason = script('reason.js', `console.log(JSON.stringify({ pass: false, reason: 'sent ' + process.env.OPENAI_API_KEY }));`);
    assert.equal((await keyed(reason).grade(weatherCase(), weatherRun(), never)).reason, 'sent [redacted]');
    const garbage = script('garbage-key.js', `console.log('token=' + process.env.OPENAI_API_KEY);`);
    await assert.rejects(keyed(garbage).grade(weatherCase(), weatherRun(), never), leaks);
    assert.ok(!keyed(`echo ${key}`).name.includes('SECRETSECRET'));
  });
});
