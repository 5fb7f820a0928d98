/**
 * `agent-sessions run --tools … --match-name-only …` (the CLI from source, as a child process) with a scripted agent
 * command that writes through our store (test/unit/agents/command/replayKit.ts): the flags' checks, the line per
 * call after the run, the replay sentence, and the outcome's marks with --json.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '../../../src/shared/protocol/runEvents';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { snapshot } from '../agents/command/commandKit';
import { scriptedAgent, seedRecordedSession, type AgentPlan } from '../agents/command/replayKit';

const HONOURS: AgentPlan = {
  calls: [
    { name: 'get_weather', arguments: '{"city":"Lyon"}', output: 'replay' },
    { name: 'get_weather', arguments: '{"city":"Paris"}', output: 'replay' },
    { name: 'send_email', arguments: '{"to":"ana@example.com","at":"2026-12-05T03:00:00Z"}', output: 'replay' },
  ],
};

describe('agent-sessions run --tools / --match-name-only (the CLI from source, a scripted agent command)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-replay-');
  let db: string;
  let n = 0;

  beforeEach(async () => {
    db = join(tmp.dir, `conversations-${++n}.db`);
    await seedRecordedSession(db);
  });
  after(() => tmp.cleanup());

  /** The CLI, run from the repository (where the scripted agent finds `tsx`). */
  function cli(args: string[]) {
    const r = spawnSync(process.execPath, ['--no-warnings', '--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  function agent(plan: AgentPlan, name: string): string {
    const dir = join(tmp.dir, name);
    mkdirSync(dir, { recursive: true });
    return scriptedAgent(dir, plan);
  }

  it('refuses a --tools value it does not know, and --match-name-only where nothing is replayed, with exit code 2', () => {
    const command = agent(HONOURS, 'usage');
    const bad = cli(['run', db, 's1', '--from-turn', '2', '--command', command, '-m', 'x', '--tools', 'mock']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--tools takes replay, strict, live; got 'mock'/);
    const live = cli(['run', db, 's1', '--command', command, '-m', 'x', '--match-name-only', 'send_email']);
    assert.equal(live.code, 2, live.stderr);
    assert.match(live.stderr, /--match-name-only matches recorded calls, which a live run does not/);
    const empty = cli(['run', db, 's1', '--from-turn', '2', '--command', command, '-m', 'x', '--match-name-only', ' ']);
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /--match-name-only takes a tool name \(1 to 256 characters\)/);
    // None of them ran anything.
    assert.equal(bad.stdout + live.stdout + empty.stdout, '');
  });

  it('replays by default with --from-turn and prints one line per call and the summary sentence', () => {
    const r = cli([
      'run',
      db,
      's1',
      '--from-turn',
      '2',
      '--name',
      'again',
      '--command',
      agent(HONOURS, 'ok'),
      '-m',
      'Again?',
      '--match-name-only',
      'send_email',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        [
          "Done: Saved turn 2 on branch 'again': [^\\n]*",
          'replayed get_weather \\(call_new_1 ← call_lyon\\)',
          'replayed get_weather \\(call_new_2 ← call_paris\\)',
          'replayed send_email \\(call_new_3 ← call_email\\)',
          '3 tool calls replayed; not replayable \\(run by the provider\\): web_search_call; diverged at step 1: get_weather with other arguments \\(city: "Paris" → "Lyon"\\)\\.\\n$',
        ].join('\\n'),
      ),
    );
  });

  it('--tools strict: a call the agent ran live fails the run (exit 1), rolled back, with its line and message', async () => {
    const before = await snapshot(db);
    const plan: AgentPlan = {
      calls: [
        { name: 'get_weather', arguments: '{"city":"Paris"}', output: 'replay' },
        { name: 'get_weather', arguments: '{"city":"Berlin"}', output: 'Berlin: 9°C', report: 'none' },
      ],
    };
    const r = cli(['run', db, 's1', '--from-turn', '2', '--command', agent(plan, 'strict'), '-m', 'Again?', '--tools', 'strict']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /\nFailed: Strict replay: the agent ran get_weather\(\{"city":"Berlin"\}\) live, which matches no recorded call/,
    );
    assert.match(
      r.stdout,
      /\nRolled back, so not in the file: the calls the agent made were\nreplayed get_weather \(call_new_1 ← call_paris\)\nunmatched get_weather \(call_new_2; nearest recorded call call_lyon\)\n1 tool call replayed, 1 unmatched \(get_weather\)/,
    );
    assert.deepEqual(await snapshot(db), before);
  });

  it('a run rolled back before any call says nothing of replay (not "0 tool calls replayed; this run stopped calling tools")', () => {
    const r = cli(['run', db, 's1', '--from-turn', '2', '--command', `"${process.execPath}" -e 0`, '-m', 'Again?']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /\nFailed: .*without writing a turn/);
    assert.doesNotMatch(r.stdout, /tool calls? replayed|diverged|Rolled back, so not in the file/);
  });

  it("a report that lies shows on the call's line and as a disagreement; --json carries the marks in the outcome", () => {
    const plan: AgentPlan = {
      calls: [
        {
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          output: 'Paris: 25°C today',
          report: { outcome: 'replayed', recordedCallId: 'call_paris' },
        },
      ],
    };
    const command = agent(plan, 'liar');
    const text = cli(['run', db, 's1', '--from-turn', '2', '--command', command, '-m', 'Again?']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /\nlive get_weather \(call_new_1; nearest recorded call call_paris\); the agent reported replayed\nreport disagrees: get_weather \(call_new_1\): reported replayed from call_paris, but its written output is not a recorded output of a matching call\n0 tool calls replayed, 1 ran live \(get_weather\)/,
    );
    const json = cli(['run', db, 's1', '--from-turn', '2', '--command', command, '-m', 'Again?', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent);
    const outcome = events[events.length - 1];
    assert.equal(outcome?.kind, 'run/completed');
    assert.deepEqual(
      outcome?.kind === 'run/completed' && outcome.replay?.marks.map((m) => [m.callId, m.outcome, m.recordedCallId, m.reported]),
      [['call_new_1', 'live', 'call_paris', 'replayed']],
    );
  });

  it('without --from-turn the tools run live and a run without calls prints no replay lines', () => {
    const r = cli(['run', db, 's1', '--command', agent({ calls: [] }, 'plain'), '-m', 'Hi']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nDone: Saved turn 4 on branch 'main': [^\n]*\n$/);
  });
});
