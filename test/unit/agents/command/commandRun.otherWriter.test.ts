/**
 * An agent command's run while another writer writes the same file (docs/session-format.md §1, docs/agent-command.md
 * §3 and §5): a Python command (python_turn.py's writer) writes its turn, and this process writes as another writer
 * of the file at set moments of the run. The command waits on files this test creates, so the order is always the
 * same: the other writer before the command's turn, or after it, before the run ends.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import { readBranch, seedSession } from '../agentTestKit';
import { mk } from '../../../support/sessionHelpers';
import { PYTHON_TURN, completed, failed } from './commandKit';

const PYTHON = 'python3';
const hasPython = spawnSync(PYTHON, ['--version']).status === 0;

/**
 * The command: says it is `ready`, waits for `write`, writes (AGENT_WRITES: `message`, the run's message only, as the
 * SDK does before a model call that then fails; `turn`, its whole turn and usage; `rephrased`, a message that is not
 * the one it was given), says it `wrote`, waits for `end`, then fails with RUN_ERROR or finishes (AGENT_END).
 */
const AGENT = `
import importlib.util, json, os, sys, time
spec = importlib.util.spec_from_file_location("pt", sys.argv[1])
pt = importlib.util.module_from_spec(spec); spec.loader.exec_module(pt)
folder, writes, ending = sys.argv[2], os.environ["AGENT_WRITES"], os.environ["AGENT_END"]
def wait_for(name):
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(folder, name)):
        if time.time() > deadline: sys.exit(9)
        time.sleep(0.02)
def say(name): open(os.path.join(folder, name), "w").close()
def emit(e): sys.stdout.write(json.dumps(e) + "\\n"); sys.stdout.flush()
ri = json.load(sys.stdin.buffer)
coords = ri["forwardedProps"]["agentSessions"]
emit({"type": "RUN_STARTED", "threadId": ri["threadId"], "runId": ri["runId"]})
say("ready"); wait_for("write")
items = [{"role": "user", "content": "In other words: " + ri["messages"][0]["content"]}] if writes == "rephrased" else coords["input"]
pt.write_turn(coords, items, pt.assistant_item("msg_agent", "agent answer") if writes == "turn" else None)
say("wrote"); wait_for("end")
if ending == "error":
    emit({"type": "RUN_ERROR", "message": "model unavailable"}); sys.exit(1)
emit({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})
emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "agent answer"})
emit({"type": "TEXT_MESSAGE_END", "messageId": "m1"})
emit({"type": "RUN_FINISHED", "threadId": ri["threadId"], "runId": ri["runId"]})
`;

describe('agent commands while another writer writes the same file (real processes)', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;

  before(function () {
    if (!hasPython) {
      console.log('    (skipped: python3 is not installed on this machine, so no Python command can run)');
      this.skip();
    }
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-otherwriter-'));
    dbPath = join(dir, 'conversations.db');
    writeFileSync(join(dir, 'agent.py'), AGENT);
    await seedSession(dbPath, [
      ['What is the weather in Paris?', 'Mild.'],
      ['And tomorrow?', 'Rain.'],
    ]);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function signalled(name: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(dir, name))) {
      if (Date.now() > deadline) throw new Error(`the command never said '${name}'`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Another writer of the file: `turns` turns (with their usage by default) on a session's main, on a connection of its own. */
  async function otherWriter(turns: number, at: { sessionId?: string; usage?: boolean } = {}): Promise<void> {
    const s = new AdvancedSQLiteSession({ sessionId: at.sessionId ?? 's1', dbPath, createTables: true });
    try {
      for (let i = 0; i < turns; i++) {
        await s.addItems([mk.user(`other q${i}`), mk.assistant(`other a${i}`)]);
        if (at.usage ?? true)
          await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 } } });
      }
    } finally {
      s.close();
    }
  }

  /**
   * Runs the command; `before` and `after` write as another writer before the command writes, and after it wrote but
   * before the run ends.
   */
  async function run(
    writes: 'message' | 'turn' | 'rephrased',
    ending: 'error' | 'finish',
    steps: { before?: () => Promise<void>; after?: () => Promise<void> },
    options: Partial<CommandRunOptions> = {},
  ) {
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      agent: { kind: 'command', name: 'bot', command: `${PYTHON} "${join(dir, 'agent.py')}" "${PYTHON_TURN}" "${dir}"` },
      input: 'And the day after?',
      env: { PATH: process.env.PATH ?? '', AGENT_WRITES: writes, AGENT_END: ending },
      graceMs: 300,
      ...options,
    });
    await signalled('ready');
    await steps.before?.();
    writeFileSync(join(dir, 'write'), '');
    await signalled('wrote');
    await steps.after?.();
    writeFileSync(join(dir, 'end'), '');
    return outcome;
  }

  const texts = async (branchId: string) =>
    (await readBranch(dbPath, branchId)).items.map((i) => ('content' in i && typeof i.content === 'string' ? i.content : i.type));

  for (const usage of [false, true])
    it(`a failed run that spent nothing keeps its message when another writer's turns (${usage ? 'with' : 'without'} usage) follow it, and removes none of theirs`, async () => {
      const o = failed(await run('message', 'error', { after: () => otherWriter(2, { usage }) }));
      assert.deepEqual((await texts('main')).slice(4), ['And the day after?', 'other q0', 'message', 'other q1', 'message']);
      assert.deepEqual(
        (await readBranch(dbPath, 'main')).usage.map((u) => [u.userTurnNumber, u.totalTokens]),
        usage
          ? [
              [4, 15],
              [5, 15],
            ]
          : [],
      );
      assert.match(o.message, /^The agent command 'bot' reported an error: model unavailable/);
      // Their turns and usage are not the run's.
      assert.equal(o.usage, null);
      assert.equal(o.written.turn, 3);
      assert.equal(
        o.written.summary,
        "Kept your message as turn 3 on branch 'main'. Could not finish cleaning up: the branch changed while the run was cleaning up (another writer added items), so 1 item(s) of this run were left in place. Another writer of the file wrote meanwhile 4 item(s) to branch 'main' that are not this run's turn; they were left there.",
      );
    });

  it("a failed run that spent nothing removes its own message, not another writer's turn written before it", async () => {
    const o = failed(await run('message', 'error', { before: () => otherWriter(1, { usage: false }) }));
    assert.deepEqual((await texts('main')).slice(4), ['other q0', 'message']);
    assert.deepEqual((await readBranch(dbPath, 'main')).turns, [1, 2, 3]);
    assert.equal(
      o.written.summary,
      "Nothing is stored: the SDK had saved your message before calling the model, and it was removed, so branch 'main' is as it was. Another writer of the file wrote meanwhile 2 item(s) to branch 'main' that are not this run's turn; they were left there.",
    );
  });

  it('a run on a fork completes while another writer appends to the branch it forked from', async () => {
    const done = completed(await run('turn', 'finish', { after: () => otherWriter(1) }, { fork: { fromTurn: 2, name: 'retry-x' } }));
    assert.equal(
      done.written.summary,
      "Saved turn 2 on branch 'retry-x': 2 item(s) and its usage. Another writer of the file wrote meanwhile 2 item(s) to branch 'main' of session 's1'; they were left there.",
    );
    assert.equal(done.finalOutput, 'agent answer');
    assert.deepEqual((await readBranch(dbPath, 'retry-x')).turns, [1, 2]);
    assert.deepEqual((await readBranch(dbPath, 'main')).turns, [1, 2, 3]);
  });

  it('a run completes while another writer writes another session of the file, and the turn has its own usage', async () => {
    const done = completed(await run('turn', 'finish', { before: () => otherWriter(1, { sessionId: 's2' }) }));
    assert.equal(
      done.written.summary,
      "Saved turn 3 on branch 'main': 2 item(s) and its usage. Another writer of the file wrote meanwhile 2 item(s) to branch 'main' of session 's2'; they were left there.",
    );
    assert.deepEqual((await readBranch(dbPath, 'main', { sessionId: 's2' })).turns, [1]);
    assert.deepEqual(
      (await readBranch(dbPath, 'main')).usage.map((u) => u.userTurnNumber),
      [3],
    );
  });

  it('a turn that does not start with the message the run gave is found by position and never removed', async () => {
    const o = failed(await run('rephrased', 'error', {}));
    assert.equal(o.written.turn, 3);
    assert.equal(
      o.written.summary,
      "Kept your message as turn 3 on branch 'main'. Could not finish cleaning up: its user message is not the one the run gave (its turn cannot be told apart from another writer's), so 1 item(s) of this run were left in place.",
    );
    assert.deepEqual((await texts('main')).slice(4), ['In other words: And the day after?']);
  });
});
