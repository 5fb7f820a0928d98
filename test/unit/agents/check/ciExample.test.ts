/**
 * The CI example (examples/ci/): the check command line of its workflow (check.yml), run as the workflow runs it,
 * through the shell, on the committed session file and review store, with the Python example agent
 * (examples/python/replay_agent.py). CI installs the real `openai-agents`; here the agent runs on the tests' stand-in
 * package (test/fixtures/agent-commands/python-standin, writing its turns with STANDIN_WRITE=1), whose scripted model
 * answers as the committed session was recorded (examples/ci/make-fixtures.mjs), and `npx agent-sessions` is the CLI
 * from source. The example as it is passes every case; a copy whose tool was changed fails each good turn's case on it
 * (the bad turn's expects no calls: its recorded ones were part of the answer rejected); and the agent as it was before
 * its fix (its model giving again the answer turn 2 was reviewed bad for) fails that case.
 *
 * Skipped, with a line saying so, when python3 is not installed.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../../../support/tempFiles';
import { REPO } from '../command/commandKit';

const CI = join(REPO, 'examples', 'ci');
const STANDIN = join(REPO, 'test', 'fixtures', 'agent-commands', 'python-standin');
/** The committed files the workflow reads, relative to the repository. */
const FIXTURES = ['examples/ci/conversations.db', 'examples/ci/reviews.db'];
const AGENT = ['examples/python/replay_agent.py', 'examples/python/agent_sessions_replay.py'];

/**
 * The `run:` of the workflow's check step: a folded block (`>-`), whose lines YAML joins with spaces. Read from the
 * file, so the test runs what CI runs.
 */
function workflowCheckLine(workflow: string): string {
  const lines = workflow.split('\n');
  const step = lines.findIndex((l) => l.trim() === '- name: Check the agent against the reviewed conversations');
  assert.ok(step >= 0, 'the workflow has no check step');
  const run = lines.findIndex((l, i) => i > step && l.trim() === 'run: >-');
  assert.ok(run > step, 'the check step has no folded run block');
  const indent = (l: string) => l.length - l.trimStart().length;
  const body: string[] = [];
  for (const l of lines.slice(run + 1)) {
    if (l.trim() === '' || indent(l) <= indent(lines[run]!)) break;
    body.push(l.trim());
  }
  return body.join(' ');
}

function pythonAvailable(): boolean {
  return spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;
}

describe('the CI example: its workflow’s check on the committed session and reviews, with the Python example agent', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-ci-example-');
  let n = 0;

  before(function () {
    if (!pythonAvailable()) {
      console.log('    python3 is not installed: skipping the CI example’s check');
      this.skip();
    }
  });
  after(() => tmp.cleanup());

  /**
   * A checkout of what the workflow uses (fixtures and agent, at their paths), with `npx` and `python` on the PATH
   * standing for CI's: `npx agent-sessions` runs the CLI from source, `python` is python3. Returns the folder.
   */
  function checkout(changeAgent?: (source: string) => string): string {
    const dir = join(tmp.dir, `checkout-${++n}`);
    for (const file of [...FIXTURES, ...AGENT]) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      copyFileSync(join(REPO, file), join(dir, file));
    }
    if (changeAgent) {
      const path = join(dir, AGENT[0]!);
      const before = readFileSync(path, 'utf8');
      const after = changeAgent(before);
      assert.notEqual(after, before, 'the deliberate change changed nothing');
      writeFileSync(path, after);
    }
    const bin = join(dir, '.bin');
    mkdirSync(bin);
    const tsx = pathToFileURL(join(REPO, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
    const cli = join(REPO, 'src', 'cli', 'main.ts');
    writeFileSync(
      join(bin, 'npx'),
      `#!/bin/sh\n[ "$1" = agent-sessions ] || { echo "this npx runs agent-sessions only" >&2; exit 127; }\nshift\n` +
        `exec "${process.execPath}" --no-warnings --import "${tsx}" "${cli}" "$@"\n`,
    );
    writeFileSync(join(bin, 'python'), '#!/bin/sh\nexec python3 "$@"\n');
    chmodSync(join(bin, 'npx'), 0o755);
    chmodSync(join(bin, 'python'), 0o755);
    return dir;
  }

  /** Runs the workflow's check line in `dir`; `answer`: the stand-in's model answers that (STANDIN_ANSWER). */
  function runWorkflowCheck(dir: string, answer?: string) {
    const line = workflowCheckLine(readFileSync(join(CI, 'check.yml'), 'utf8'));
    const r = spawnSync('sh', ['-c', line], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 100_000,
      env: {
        PATH: `${join(dir, '.bin')}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '',
        NO_COLOR: '1',
        PYTHONPATH: STANDIN,
        PYTHONDONTWRITEBYTECODE: '1',
        STANDIN_WRITE: '1',
        ...(answer === undefined ? {} : { STANDIN_ANSWER: answer }),
      },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** The lines with their times taken out (they vary). */
  const steady = (text: string) => text.replace(/\d+\.\d s/g, 'T s');

  it('runs the check the workflow names on the committed files, with the graders and reports it names', () => {
    const line = workflowCheckLine(readFileSync(join(CI, 'check.yml'), 'utf8'));
    assert.equal(
      line,
      'npx agent-sessions check examples/ci/conversations.db --reviews examples/ci/reviews.db ' +
        '--command "python examples/python/replay_agent.py" --grader trajectory:args ' +
        '--junit agent-check.xml --markdown agent-check.md',
    );
    for (const file of FIXTURES) assert.ok(existsSync(join(REPO, file)), `${file} is committed`);
  });

  it('the example as it is: every reviewed case passes, exit 0, the JUnit and Markdown reports written, the files unchanged', () => {
    const dir = checkout();
    const before = FIXTURES.map((f) => readFileSync(join(dir, f)));
    const r = runWorkflowCheck(dir);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const lines = steady(r.stdout).split('\n');
    assert.deepEqual(lines.slice(0, 3).sort(), [
      'PASS weather-ci/main/1  trajectory:args ✓  150 tok  T s',
      // The bad turn's case: no calls to expect; the rule that its answer is not the one reviewed as bad holds.
      'PASS weather-ci/main/2  not-rejected ✓  150 tok  T s',
      'PASS weather-ci/main/3  trajectory:args ✓  150 tok  T s',
    ]);
    assert.deepEqual(lines.slice(3, 5), ['3 passed, 0 failed', 'graders: trajectory:args']);

    const junit = readFileSync(join(dir, 'agent-check.xml'), 'utf8');
    assert.match(
      junit,
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="agent-sessions check" tests="3" failures="0" errors="0" skipped="0"/,
    );
    assert.equal(junit.match(/<testcase classname="weather-ci\/main" name="turn \d"/g)?.length, 3);
    // The bad turn with a correction is a case too: its verdict is in the report.
    assert.match(junit, /<property name="case" value="weather-ci\/main\/2"\/>\s*<property name="verdict" value="bad"\/>/);
    const markdown = readFileSync(join(dir, 'agent-check.md'), 'utf8');
    assert.match(markdown, /^### ✅ Agent check: 3 passed, 0 failed\n\n3 cases in \d+\.\d s · graders: trajectory:args\n/);

    FIXTURES.forEach((f, i) => assert.ok(readFileSync(join(dir, f)).equals(before[i]!), `${f} changed`));
    // Read in place, as CI reads the checkout: no journal or WAL file is left beside the committed files.
    assert.deepEqual(readdirSync(join(dir, 'examples', 'ci')).sort(), ['conversations.db', 'reviews.db']);
  });

  it('the example with its tool changed: every good turn’s case fails with the divergence, exit 1, failures in the JUnit report', () => {
    // A deliberate change to the example's tool: renamed, so the model calls get_forecast where get_weather was.
    const dir = checkout((source) => source.replaceAll('get_weather', 'get_forecast'));
    const r = runWorkflowCheck(dir);
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    const out = steady(r.stdout);
    for (const turn of [1, 3])
      assert.ok(
        out.includes(
          `FAIL weather-ci/main/${turn}  trajectory:args ✗  150 tok  T s\n` +
            '    trajectory:args: diverged at step 1: get_forecast instead of get_weather\n',
        ),
        out,
      );
    // The bad turn's recorded calls are no reference: its case is judged by its answer, not the one reviewed as bad.
    assert.ok(out.includes('PASS weather-ci/main/2  not-rejected ✓  150 tok  T s\n'), out);
    assert.match(out, /\n1 passed, 2 failed\ngraders: trajectory:args\n/);
    const junit = readFileSync(join(dir, 'agent-check.xml'), 'utf8');
    assert.match(junit, /<testsuites name="agent-sessions check" tests="3" failures="2" errors="0"/);
    assert.equal(
      junit.match(/<failure message="trajectory:args: diverged at step 1: get_forecast instead of get_weather" type="fail">/g)?.length,
      2,
    );
    const markdown = readFileSync(join(dir, 'agent-check.md'), 'utf8');
    assert.match(markdown, /^### ❌ Agent check: 1 passed, 2 failed\n/);
    assert.match(
      markdown,
      /\| weather\\-ci\/main turn 1 \| good \| ❌ fail \| trajectory:args: diverged at step 1: get\\_forecast instead of get\\_weather \|/,
    );
  });

  it('the example with the agent from before its fix: the bad turn’s case fails, the agent still giving the answer reviewed as bad', () => {
    // Turn 2 was recorded before the fix (make-fixtures.mjs): its answer, reviewed bad and corrected, is this one. An
    // agent that gives it again is not fixed, whatever it calls (trajectory:args does not judge a bad turn's case).
    const dir = checkout();
    const r = runWorkflowCheck(dir, 'Take an umbrella: it is raining in Paris.');
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    const out = steady(r.stdout);
    const why = 'repeats the answer reviewed as bad (the same text, ignoring case and whitespace)';
    assert.ok(out.includes(`FAIL weather-ci/main/2  not-rejected ✗  150 tok  T s\n    not-rejected: ${why}\n`), out);
    // The good turns' cases grade the calls only: they pass.
    for (const turn of [1, 3]) assert.ok(out.includes(`PASS weather-ci/main/${turn}  trajectory:args ✓  150 tok  T s\n`), out);
    assert.match(out, /\n2 passed, 1 failed\ngraders: trajectory:args\n/);
    const junit = readFileSync(join(dir, 'agent-check.xml'), 'utf8');
    assert.match(junit, /<testsuites name="agent-sessions check" tests="3" failures="1" errors="0"/);
    assert.ok(junit.includes(`<failure message="not-rejected: ${why}" type="fail">`), junit);
    const markdown = readFileSync(join(dir, 'agent-check.md'), 'utf8');
    assert.match(markdown, /^### ❌ Agent check: 2 passed, 1 failed\n/);
    assert.ok(
      markdown.includes(`| weather\\-ci/main turn 2 | bad | ❌ fail | not\\-rejected: ${why.replace(/[()]/g, (c) => `\\${c}`)} |`),
      markdown,
    );
  });
});
