/**
 * Contract test of the Python side of the agent command protocol (docs/agent-command.md):
 *
 * - examples/python/replay_agent.py, run against a stand-in `agents` package
 *   (test/fixtures/agent-commands/python-standin/) that records the session calls and streams a scripted answer: the
 *   events on stdout must be valid AG-UI 1.0 (`@ag-ui/core`'s schemas), in order, and the session must be put on the
 *   branch exactly as §3 says (switch_to_branch, create_branch_from_turn for a fork, the model, store_run_usage);
 *   with version 2's `tools` its function tools replay the recorded results (examples/python/agent_sessions_replay.py);
 * - test/fixtures/agent-commands/python_turn.py, the standard-library command other tests run: the turn it writes into
 *   a copy of a conformance database (recorded with the Python SDK 0.22.0) must be Python's, row for row, and equal to
 *   what this repository's Python-conformant store writes for the same calls; its misbehaving modes must misbehave as
 *   documented.
 *
 * Skipped, with a line saying so, when python3 is not installed.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { EventSchema, RunAgentInputSchema } from '@ag-ui/core/schemas';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { seedSession } from '../agentTestKit';
import { buildSharedCli } from '../../../support/cliBundle';
import type { RunEvent } from '../../../../src/shared/protocol/runEvents';
import { commandSpanRecords } from '../../../../src/agents/command/commandSpans';
import { recordedInputOf } from '../../../../src/store/traces/recordedInput';

type Json = Record<string, unknown>;

const REPO = resolve(__dirname, '../../../..');
const EXAMPLE = join(REPO, 'examples/python/replay_agent.py');
const EXAMPLE_REPLAY = join(REPO, 'examples/python/agent_sessions_replay.py');
const PYTHON_TURN = join(REPO, 'test/fixtures/agent-commands/python_turn.py');
const STANDIN = join(REPO, 'test/fixtures/agent-commands/python-standin');
const CONFORMANCE = join(REPO, 'test/fixtures/conformance');
const PYTHON = 'python3';

/** What python_turn.py reports and stores for its one scripted model request. */
const TURN_USAGE = { requests: 1, input_tokens: 21, output_tokens: 7, total_tokens: 28 };
const TURN_INPUT_DETAILS = '{"cache_write_tokens": 0, "cached_tokens": 5}';
const TURN_OUTPUT_DETAILS = '{"reasoning_tokens": 2}';

function pythonAvailable(): boolean {
  const r = spawnSync(PYTHON, ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

interface RunInputOptions {
  sessionId: string;
  branchId: string;
  dbPath: string;
  fork?: { fromBranchId: string; fromTurn: number } | null;
  model?: string | null;
  text: string;
  input?: Json[];
  sessionsTable?: string;
  messagesTable?: string;
  /** Version 2's `tools` (docs/agent-command.md §2), built here by hand: the input is then version 2. */
  tools?: Json;
}

/** A RunAgentInput as docs/agent-command.md §2 describes it; checked against `@ag-ui/core`'s schema. */
function runInput(o: RunInputOptions): Json {
  const runId = `run-${Math.random().toString(16).slice(2)}`;
  const input = {
    threadId: o.sessionId,
    runId,
    protocolVersion: '1.0',
    state: {},
    messages: [{ id: `${runId}-user`, role: 'user', content: o.text }],
    tools: [],
    context: [],
    forwardedProps: {
      agentSessions: {
        version: o.tools ? 2 : 1,
        store: {
          kind: 'sqlite',
          path: o.dbPath,
          sessionsTable: o.sessionsTable ?? 'agent_sessions',
          messagesTable: o.messagesTable ?? 'agent_messages',
        },
        sessionId: o.sessionId,
        branchId: o.branchId,
        fork: o.fork ?? null,
        model: o.model ?? null,
        input: o.input ?? [{ content: o.text, role: 'user' }],
        ...(o.tools ? { tools: o.tools } : {}),
      },
    },
  };
  const parsed = RunAgentInputSchema.safeParse(input);
  assert.ok(parsed.success, `the test's RunAgentInput is not valid: ${parsed.success ? '' : parsed.error.message}`);
  return input;
}

interface PythonRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Started {
  child: ReturnType<typeof spawn>;
  done: Promise<PythonRun>;
  /** Resolves once `pattern` has appeared on stdout (or stderr, with `stream: 'stderr'`). */
  waitFor(pattern: string, stream?: 'stdout' | 'stderr'): Promise<void>;
}

/** Starts `python3 <script>` with `input` on stdin (then closed); killed after 15 s so a hang fails the test. */
function startPython(script: string, input: Json, env: Record<string, string> = {}): Started {
  const child = spawn(PYTHON, [script], {
    cwd: REPO,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: string; stream: 'stdout' | 'stderr'; resolve: () => void }[] = [];
  const check = () => {
    for (const w of waiters.splice(0)) {
      if ((w.stream === 'stdout' ? stdout : stderr).includes(w.pattern)) w.resolve();
      else waiters.push(w);
    }
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => ((stdout += d), check()));
  child.stderr.setEncoding('utf8').on('data', (d: string) => ((stderr += d), check()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const done = new Promise<PythonRun>((resolveDone, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveDone({ code, signal, stdout, stderr });
    });
  });
  child.stdin.end(JSON.stringify(input));
  return {
    child,
    done,
    waitFor: (pattern, stream = 'stdout') =>
      new Promise<void>((resolveWait, reject) => {
        waiters.push({ pattern, stream, resolve: resolveWait });
        check();
        void done.then((r) => reject(new Error(`exited (${r.code}/${r.signal}) before printing ${pattern}: ${r.stderr}`)));
      }),
  };
}

function runPython(script: string, input: Json, env: Record<string, string> = {}): Promise<PythonRun> {
  return startPython(script, input, env).done;
}

/** Every stdout line as an AG-UI event; fails on a line that is not a valid one. */
function agUiEvents(stdout: string): Json[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      let value: unknown;
      assert.doesNotThrow(() => (value = JSON.parse(line)), `not JSON: ${line}`);
      const parsed = EventSchema.safeParse(value);
      assert.ok(parsed.success, `not a valid AG-UI event: ${line}\n${parsed.success ? '' : parsed.error.message}`);
      return value as Json;
    });
}

const types = (events: Json[]) => events.map((e) => e.type);
const deltas = (events: Json[]) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'asi-pycmd-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A copy of a conformance database (never open the original: opening a WAL file writes -wal/-shm next to it). */
function copyConformance(name: string, dir: string, as = name): string {
  const target = join(dir, as);
  copyFileSync(join(CONFORMANCE, name), target);
  return target;
}

/**
 * A session file as the real `AdvancedSQLiteSession(create_tables=False)` opens it (its structure tables claimed by the
 * base tables: made here with `createTables`), holding what the stand-in's branch calls need, as the real ones do:
 * sessions `support-42`, `s` and `s1` with two turns on `main`, and branch `retry-2` of `support-42` and `s1` and `alt`
 * of `s`, each made from turn 2 (so turn 1 is theirs too).
 */
async function seedStandinFile(path: string): Promise<void> {
  const branches = [
    ['support-42', 'retry-2'],
    ['s', 'alt'],
    ['s1', 'retry-2'],
  ] as const;
  for (const [sessionId] of branches) {
    await seedSession(
      path,
      [
        ['Weather in Paris?', 'Mild.'],
        ['Tomorrow?', 'Rain.'],
      ],
      { sessionId },
    );
  }
  for (const [sessionId, branch] of branches) {
    const session = new AdvancedSQLiteSession({ sessionId, dbPath: path });
    try {
      await session.createBranchFromTurn(2, branch);
    } finally {
      session.close();
    }
  }
}

const TIMESTAMPS = new Set(['created_at', 'updated_at']);

/** A table's rows in rowid order, without the CURRENT_TIMESTAMP columns. */
function rows(path: string, table: string): Json[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(`SELECT * FROM ${table} ORDER BY rowid`)
      .all()
      .map((r) => Object.fromEntries(Object.entries(r as Json).filter(([k]) => !TIMESTAMPS.has(k))));
  } finally {
    db.close();
  }
}

const TABLES = [
  'agent_sessions',
  'agent_messages',
  'message_structure',
  'turn_usage',
  'branch_reservations',
  'session_clear_generations',
  'sqlite_sequence',
] as const;

function snapshot(path: string): Record<string, Json[]> {
  const out: Record<string, Json[]> = {};
  for (const t of TABLES) out[t] = rows(path, t);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    out.sqlite_master = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid').all() as Json[];
  } finally {
    db.close();
  }
  return out;
}

function sessionTimes(path: string, sessionId: string): { created_at: string; updated_at: string } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT created_at, updated_at FROM agent_sessions WHERE session_id = ?').get(sessionId) as {
      created_at: string;
      updated_at: string;
    };
  } finally {
    db.close();
  }
}

/** The rows `after` has beyond `before` (same table, rows compared as JSON), checking that none of `before` changed. */
function added(before: Json[], after: Json[], what: string): Json[] {
  assert.deepEqual(after.slice(0, before.length), before, `${what}: existing rows changed`);
  return after.slice(before.length);
}

function assistantText(messageData: unknown): string {
  const item = JSON.parse(String(messageData)) as { content: { text: string }[] };
  return item.content[0]!.text;
}

describe('contract: the Python agent command (examples/python/replay_agent.py, test/fixtures/agent-commands/python_turn.py)', function () {
  before(function () {
    if (!pythonAvailable()) {
      console.log('    python3 is not installed: skipping the Python agent-command contract tests');
      this.skip();
    }
  });

  let tmp: { dir: string; cleanup: () => void };
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  describe('the scripts compile', () => {
    for (const script of [EXAMPLE, EXAMPLE_REPLAY, PYTHON_TURN]) {
      it(`python3 -m py_compile ${script.slice(REPO.length + 1)}`, () => {
        const r = spawnSync(PYTHON, ['-m', 'py_compile', script], {
          encoding: 'utf8',
          // Keeps __pycache__ out of the repository.
          env: { ...process.env, PYTHONPYCACHEPREFIX: join(tmp.dir, 'pycache') },
        });
        assert.equal(r.status, 0, r.stderr);
      });
    }
  });

  describe('examples/python/replay_agent.py with the stand-in agents package', () => {
    let log: string;
    let dbPath: string;
    beforeEach(async () => {
      log = join(tmp.dir, 'standin.jsonl');
      // The stand-in's AdvancedSQLiteSession, like the real one with create_tables=False, opens only a file whose
      // tables it owns, and switches and forks only to what the file holds.
      dbPath = join(tmp.dir, 'conversations.db');
      await seedStandinFile(dbPath);
    });

    const runExample = (input: Json, script = 'answer') =>
      startPython(EXAMPLE, input, { PYTHONPATH: STANDIN, STANDIN_LOG: log, STANDIN_SCRIPT: script });
    const calls = (): Json[] =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Json)
        : [];
    const callNames = () => calls().map((c) => c.call);
    const call = (name: string) => {
      const found = calls().filter((c) => c.call === name);
      assert.equal(found.length, 1, `expected one ${name} call, got ${JSON.stringify(calls())}`);
      return found[0]!;
    };

    it('continues an existing branch on the model it was given: switch_to_branch, clone(model), run, store_run_usage, RUN_FINISHED', async () => {
      const input = runInput({ sessionId: 'support-42', branchId: 'retry-2', dbPath, model: 'gpt-4.1-mini', text: 'Weather in Paris?' });
      const r = await runExample(input).done;
      assert.equal(r.code, 0, r.stderr);
      // The run's spans (the example's trace processor) are checked below; the rest is the protocol's order.
      const all = agUiEvents(r.stdout);
      const spanEvents = all.filter((e) => e.type === 'CUSTOM' && e.name === 'agent-sessions.spans');
      const events = all.filter((e) => !spanEvents.includes(e));
      assert.deepEqual(types(events), [
        'RUN_STARTED',
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
        'TOOL_CALL_END',
        'TOOL_CALL_RESULT',
        'CUSTOM',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'RUN_FINISHED',
      ]);
      const [started, toolStart, toolArgs, toolEnd, toolResult, item, textStart, , , textEnd, finished] = events as Json[];
      assert.deepEqual(started, { type: 'RUN_STARTED', threadId: 'support-42', runId: input.runId });
      assert.deepEqual(toolStart, { type: 'TOOL_CALL_START', toolCallId: 'call_standin_1', toolCallName: 'get_weather' });
      assert.deepEqual(toolArgs, { type: 'TOOL_CALL_ARGS', toolCallId: 'call_standin_1', delta: '{"city": "Paris"}' });
      assert.deepEqual(toolEnd, { type: 'TOOL_CALL_END', toolCallId: 'call_standin_1' });
      // The example's own tool ran (the stand-in calls it), and its return value is the result.
      assert.equal(toolResult!.toolCallId, 'call_standin_1');
      assert.equal(toolResult!.content, 'The weather in Paris is sunny.');
      assert.equal(toolResult!.role, 'tool');
      assert.deepEqual(item, {
        type: 'CUSTOM',
        name: 'agent-sessions.item',
        value: { id: 'rs_standin_1', summary: [], type: 'reasoning' },
      });
      assert.equal(textStart!.role, 'assistant');
      for (const e of events.filter((x) => String(x.type).startsWith('TEXT_MESSAGE_'))) assert.equal(e.messageId, textStart!.messageId);
      assert.equal(textEnd!.messageId, textStart!.messageId);
      assert.equal(deltas(events), 'It is sunny in Paris.');
      assert.deepEqual(finished, {
        type: 'RUN_FINISHED',
        threadId: 'support-42',
        runId: input.runId,
        usage: [{ inputTokens: 120, outputTokens: 30, totalTokens: 150, model: 'gpt-4.1-mini', reasoningTokens: 5, cachedInputTokens: 20 }],
      });

      // Each span as the SDK exports it, the response's model and usage added: a tool and a model request.
      const link = { sessionId: 'support-42', branchId: 'retry-2', turnNumber: 3 };
      const { records, rejected } = commandSpanRecords(
        spanEvents.flatMap((e) => (e.value as { spans: unknown[] }).spans),
        [],
        link,
      );
      assert.deepEqual(rejected, []);
      assert.deepEqual(
        records.map((rec) => [
          rec.kind,
          rec.name,
          rec.model,
          rec.inputTokens,
          rec.outputTokens,
          rec.cachedTokens,
          rec.reasoningTokens,
          rec.endUs - rec.startUs,
        ]),
        [
          ['tool', 'get_weather', null, null, null, null, null, 300_000],
          ['model', 'response gpt-4.1-mini', 'gpt-4.1-mini', 120, 30, 20, 5, 1_250_000],
        ],
      );
      // The model request's input (the SDK's `span_data.input`) travels with its span, with the agent's instructions
      // and tool definitions, and reads back as the turn's recorded input (docs/context.md).
      const recordedInput = recordedInputOf(records[1]!.attributes);
      assert.ok(recordedInput && recordedInput !== 'unreadable', 'the model span carries no readable input');
      assert.deepEqual(recordedInput.items, [
        { content: 'Weather in Paris?', role: 'user' },
        { arguments: '{"city": "Paris"}', call_id: 'call_standin_1', name: 'get_weather', type: 'function_call', id: 'fc_standin_1' },
        { call_id: 'call_standin_1', output: 'The weather in Paris is sunny.', type: 'function_call_output' },
      ]);
      assert.equal(recordedInput.instructions, 'You are a helpful assistant. Answer briefly.');
      assert.deepEqual(
        (recordedInput.tools as Json[]).map((t) => [t.type, t.name]),
        [['function', 'get_weather']],
      );
      assert.deepEqual(callNames(), [
        'function_tool',
        'AdvancedSQLiteSession',
        'switch_to_branch',
        'Agent',
        'Agent.clone',
        'Runner.run_streamed',
        // What the runner writes through the session (the input, the tool step, the answer) and the tool itself.
        'add_items',
        'tool_function',
        'add_items',
        'add_items',
        'store_run_usage',
        'close',
      ]);
      assert.deepEqual(call('AdvancedSQLiteSession'), {
        call: 'AdvancedSQLiteSession',
        session_id: 'support-42',
        db_path: dbPath,
        create_tables: false,
        sessions_table: 'agent_sessions',
        messages_table: 'agent_messages',
      });
      assert.deepEqual(call('switch_to_branch'), { call: 'switch_to_branch', branch_id: 'retry-2', branch_before: 'main' });
      assert.deepEqual(call('Agent.clone'), { call: 'Agent.clone', model: 'gpt-4.1-mini' });
      const run = call('Runner.run_streamed');
      assert.equal(run.model, 'gpt-4.1-mini');
      assert.equal(run.session_id, 'support-42');
      assert.equal(run.session_branch, 'retry-2', 'the run must start on the given branch');
      assert.deepEqual(run.input, [{ content: 'Weather in Paris?', role: 'user' }], 'forwardedProps input goes to the runner');
      assert.deepEqual(call('store_run_usage'), {
        call: 'store_run_usage',
        branch: 'retry-2',
        usage: { requests: 2, input_tokens: 120, output_tokens: 30, total_tokens: 150, cached_tokens: 20, reasoning_tokens: 5 },
      });
    });

    it('a fork at turn 1 from main: create_branch_from_turn(1, branchId) and no switch; custom table names; the agent keeps its own model', async () => {
      const custom = join(tmp.dir, 'custom-tables.db');
      await seedSession(custom, [['Hi', 'Hello.']], {
        sessionId: 'support-42',
        sessionsTable: 'conv_sessions',
        messagesTable: 'conv_messages',
      });
      const input = runInput({
        sessionId: 'support-42',
        branchId: 'retry-3',
        dbPath: custom,
        fork: { fromBranchId: 'main', fromTurn: 1 },
        model: null,
        text: 'Hello again',
        sessionsTable: 'conv_sessions',
        messagesTable: 'conv_messages',
      });
      const r = await runExample(input).done;
      assert.equal(r.code, 0, r.stderr);
      const events = agUiEvents(r.stdout);
      assert.equal(events[0]!.type, 'RUN_STARTED');
      assert.equal(events.at(-1)!.type, 'RUN_FINISHED');
      // No model was asked for and the placeholder agent names none: the usage entry has no model.
      assert.deepEqual(events.at(-1)!.usage, [
        { inputTokens: 120, outputTokens: 30, totalTokens: 150, reasoningTokens: 5, cachedInputTokens: 20 },
      ]);
      assert.deepEqual(callNames(), [
        'function_tool',
        'AdvancedSQLiteSession',
        'create_branch_from_turn',
        'Agent',
        'Runner.run_streamed',
        // What the runner writes through the session (the input, the tool step, the answer) and the tool itself.
        'add_items',
        'tool_function',
        'add_items',
        'add_items',
        'store_run_usage',
        'close',
      ]);
      assert.equal(call('AdvancedSQLiteSession').sessions_table, 'conv_sessions');
      assert.equal(call('AdvancedSQLiteSession').messages_table, 'conv_messages');
      assert.deepEqual(call('create_branch_from_turn'), {
        call: 'create_branch_from_turn',
        turn_number: 1,
        branch_name: 'retry-3',
        branch_before: 'main',
      });
      assert.equal(call('Runner.run_streamed').model, null);
      assert.equal(call('Runner.run_streamed').session_branch, 'retry-3');
      assert.equal(call('store_run_usage').branch, 'retry-3');
    });

    it('a fork at turn 1 from another branch: switch_to_branch(fromBranchId) first, then create_branch_from_turn', async () => {
      const input = runInput({ sessionId: 's', branchId: 'b2', dbPath, fork: { fromBranchId: 'alt', fromTurn: 1 }, text: 'x' });
      const r = await runExample(input).done;
      assert.equal(r.code, 0, r.stderr);
      agUiEvents(r.stdout);
      assert.deepEqual(
        calls()
          .filter((c) => c.call === 'switch_to_branch' || c.call === 'create_branch_from_turn')
          .map((c) => [c.call, c.branch_id ?? c.branch_name, c.branch_before]),
        [
          ['switch_to_branch', 'alt', 'main'],
          ['create_branch_from_turn', 'b2', 'alt'],
        ],
      );
      assert.equal(call('Runner.run_streamed').session_branch, 'b2');
    });

    it('continuing main moves nothing: no switch, no branch creation', async () => {
      const r = await runExample(runInput({ sessionId: 's', branchId: 'main', dbPath, text: 'x' })).done;
      assert.equal(r.code, 0, r.stderr);
      agUiEvents(r.stdout);
      assert.ok(!callNames().includes('switch_to_branch') && !callNames().includes('create_branch_from_turn'), JSON.stringify(calls()));
      assert.equal(call('Runner.run_streamed').session_branch, 'main');
    });

    it('a run that fails: the open message is ended, its usage is stored and sent on RUN_ERROR, exit code 1', async () => {
      const input = runInput({ sessionId: 's', branchId: 'main', dbPath, model: 'gpt-4o', text: 'x' });
      const r = await runExample(input, 'fail').done;
      assert.equal(r.code, 1);
      assert.match(r.stderr, /RuntimeError: model exploded/, 'the traceback goes to stderr');
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_ERROR']);
      assert.deepEqual(events.at(-1), {
        type: 'RUN_ERROR',
        message: 'model exploded',
        code: 'RuntimeError',
        usage: [{ inputTokens: 10, outputTokens: 2, totalTokens: 12, model: 'gpt-4o' }],
      });
      assert.deepEqual(call('store_run_usage').usage, {
        requests: 1,
        input_tokens: 10,
        output_tokens: 2,
        total_tokens: 12,
        cached_tokens: 0,
        reasoning_tokens: 0,
      });
      assert.equal(callNames().at(-1), 'close');
    });

    it('a session that cannot be opened: RUN_STARTED, then RUN_ERROR with the reason, exit code 1', async () => {
      const r = await runExample(runInput({ sessionId: 's', branchId: 'main', dbPath: join(tmp.dir, 'missing.db'), text: 'x' })).done;
      assert.equal(r.code, 1);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'RUN_ERROR']);
      assert.equal(events[1]!.code, 'ValueError');
      assert.match(String(events[1]!.message), /missing\.db/);
      assert.ok(!callNames().includes('Runner.run_streamed'));
    });

    it('Stop (SIGINT): RUN_ERROR with code "cancelled", exit code 130, the session closed and no usage stored', async () => {
      const started = runExample(runInput({ sessionId: 's', branchId: 'main', dbPath, text: 'x' }), 'hang');
      await started.waitFor('"delta": "Thinking"');
      started.child.kill('SIGINT');
      const r = await started.done;
      assert.equal(r.code, 130, r.stderr);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_ERROR']);
      assert.deepEqual(events.at(-1), { type: 'RUN_ERROR', message: 'The run was stopped.', code: 'cancelled' });
      assert.ok(!callNames().includes('store_run_usage'), JSON.stringify(calls()));
      assert.equal(callNames().at(-1), 'close');
    });

    it('a run that stops for a tool approval is paused: the call waits without its output, the usage is stored, RUN_FINISHED has an interrupt outcome', async () => {
      const input = runInput({ sessionId: 's', branchId: 'main', dbPath, model: 'gpt-4o', text: 'Weather in Paris?' });
      const r = await runExample(input, 'approval').done;
      assert.equal(r.code, 0, r.stderr);
      const events = agUiEvents(r.stdout).filter((e) => !(e.type === 'CUSTOM' && e.name === 'agent-sessions.spans'));
      assert.deepEqual(types(events), ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED']);
      assert.deepEqual(events.at(-1), {
        type: 'RUN_FINISHED',
        threadId: 's',
        runId: input.runId,
        outcome: {
          type: 'interrupt',
          interrupts: [
            {
              id: 'call_standin_1',
              reason: 'tool_approval',
              message: 'Approve get_weather({"city": "Paris"})?',
              toolCallId: 'call_standin_1',
            },
          ],
        },
        usage: [{ inputTokens: 60, outputTokens: 10, totalTokens: 70, model: 'gpt-4o' }],
      });
      // The tool did not run; the session got the input and the call waiting (what the SDK saves), and the usage row.
      assert.deepEqual(callNames(), [
        'function_tool',
        'AdvancedSQLiteSession',
        'Agent',
        'Agent.clone',
        'Runner.run_streamed',
        'add_items',
        'add_items',
        'store_run_usage',
        'close',
      ]);
      const saved = calls().filter((c) => c.call === 'add_items');
      assert.deepEqual(
        (saved[1]!.items as Json[]).map((i) => [i.type, i.call_id]),
        [['function_call', 'call_standin_1']],
      );
      assert.deepEqual(call('store_run_usage').usage, {
        requests: 1,
        input_tokens: 60,
        output_tokens: 10,
        total_tokens: 70,
        cached_tokens: 0,
        reasoning_tokens: 0,
      });
    });
  });

  describe('the stand-in refuses what the real AdvancedSQLiteSession 0.22.0 refuses (so the example is tested as it runs)', () => {
    let dbPath: string;
    beforeEach(async () => {
      dbPath = join(tmp.dir, 'conversations.db');
      await seedStandinFile(dbPath);
    });
    const runExample = (input: Json) => startPython(EXAMPLE, input, { PYTHONPATH: STANDIN }).done;
    /** The run's RUN_ERROR, checked to be the only event after RUN_STARTED, with exit code 1. */
    async function refused(input: Json): Promise<Json> {
      const r = await runExample(input);
      assert.equal(r.code, 1, r.stderr);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'RUN_ERROR'], r.stdout);
      assert.equal(events[1]!.code, 'ValueError');
      return events[1]!;
    }

    it('create_tables=False: a file without the structure tables, and one without the configured base tables', async () => {
      const empty = join(tmp.dir, 'empty.db');
      writeFileSync(empty, '');
      const noTables = await refused(runInput({ sessionId: 's', branchId: 'main', dbPath: empty, text: 'x' }));
      assert.equal(
        noTables.message,
        `The \`message_structure\` table in ${empty} does not record exactly one owner foreign key for each required base-table column. Construct an AdvancedSQLiteSession with create_tables=True to create and claim the structure tables before opening the database without them.`,
      );
      const otherNames = await refused(
        runInput({ sessionId: 's', branchId: 'main', dbPath, text: 'x', sessionsTable: 'conv_sessions', messagesTable: 'conv_messages' }),
      );
      assert.equal(
        otherNames.message,
        `The configured base tables in ${dbPath} are missing. Construct an AdvancedSQLiteSession with create_tables=True to initialize and claim the database before opening it without table creation.`,
      );
    });

    it("switch_to_branch to a branch without rows: ValueError Branch '…' does not exist; nothing written", async () => {
      const before = snapshot(dbPath);
      const e = await refused(runInput({ sessionId: 'support-42', branchId: 'retry-9', dbPath, text: 'x' }));
      assert.equal(e.message, "Branch 'retry-9' does not exist");
      // A branch of another session is not this session's.
      const other = await refused(runInput({ sessionId: 's', branchId: 'retry-2', dbPath, text: 'x' }));
      assert.equal(other.message, "Branch 'retry-2' does not exist");
      assert.deepEqual(snapshot(dbPath), before);
    });

    it('create_branch_from_turn: a turn without a user message, and a branch id used before, fail as in the SDK; nothing written', async () => {
      const before = snapshot(dbPath);
      const noTurn = await refused(
        runInput({ sessionId: 's', branchId: 'b9', dbPath, fork: { fromBranchId: 'main', fromTurn: 5 }, text: 'x' }),
      );
      assert.equal(noTurn.message, "Turn 5 does not contain a user message in branch 'main'");
      const used = await refused(
        runInput({ sessionId: 'support-42', branchId: 'retry-2', dbPath, fork: { fromBranchId: 'main', fromTurn: 1 }, text: 'x' }),
      );
      assert.equal(used.message, "Branch ID 'retry-2' has already been used. Choose a new branch ID.");
      assert.deepEqual(snapshot(dbPath), before);
    });

    it('store_run_usage skips a run without usage and never raises: a failure is logged', () => {
      const script = [
        'import asyncio, sys',
        'from types import SimpleNamespace',
        'from agents.extensions.memory import AdvancedSQLiteSession',
        's = AdvancedSQLiteSession(session_id="s", db_path=sys.argv[1])',
        'asyncio.run(s.store_run_usage(SimpleNamespace(context_wrapper=SimpleNamespace(usage=None))))',
        'asyncio.run(s.store_run_usage(SimpleNamespace(context_wrapper=SimpleNamespace(usage=object()))))',
        'print("returned")',
      ].join('\n');
      const log = join(tmp.dir, 'standin.jsonl');
      const r = spawnSync(PYTHON, ['-c', script, dbPath], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: STANDIN, PYTHONDONTWRITEBYTECODE: '1', STANDIN_LOG: log },
      });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, 'returned\n');
      assert.match(r.stderr, /Failed to store session usage/);
      assert.ok(!readFileSync(log, 'utf8').includes('store_run_usage'), 'no usage to store: nothing recorded');
    });

    it('Agent, Agent.clone, function_tool and Runner.run_streamed refuse a keyword the SDK does not take', () => {
      const script = [
        'from agents import Agent, Runner, function_tool',
        'def f(city: str) -> str:',
        '    return city',
        'agent = Agent(name="a", tools=[function_tool(f, needs_approval=True)])',
        'for attempt in (lambda: Agent(name="a", tool=[]), lambda: agent.clone(modle="m"),',
        '                lambda: function_tool(f, name="g"), lambda: Runner.run_streamed(agent, "x", sesion=None)):',
        '    try:',
        '        attempt()',
        '        print("accepted")',
        '    except TypeError:',
        '        print("TypeError")',
      ].join('\n');
      const r = spawnSync(PYTHON, ['-c', script], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: STANDIN, PYTHONDONTWRITEBYTECODE: '1' },
      });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), ['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    });
  });

  describe('examples/python/replay_agent.py paused for a tool approval, through `agent-sessions run` (the real binary)', () => {
    it('is reported paused, waiting for the call, and exits 7; the turn keeps the call waiting and its usage', async () => {
      const dbPath = join(tmp.dir, 'conversations.db');
      await seedStandinFile(dbPath);
      const cli = await buildSharedCli();
      const run = (sessionId: string, json: boolean) =>
        spawnSync(
          process.execPath,
          [
            cli,
            'run',
            dbPath,
            sessionId,
            '--command',
            `${PYTHON} "${EXAMPLE}"`,
            '--message',
            'Weather in Paris?',
            ...(json ? ['--json'] : []),
          ],
          {
            cwd: tmp.dir,
            encoding: 'utf8',
            timeout: 60_000,
            env: {
              ...process.env,
              NODE_PATH: join(REPO, 'node_modules'),
              NO_COLOR: '1',
              PYTHONPATH: STANDIN,
              PYTHONDONTWRITEBYTECODE: '1',
              STANDIN_WRITE: '1',
              STANDIN_SCRIPT: 'approval',
            },
          },
        );
      const text = run('s', false);
      assert.equal(text.status, 7, text.stdout + text.stderr);
      assert.match(text.stdout, /Paused: waiting for input — Approve get_weather\(\{"city": "Paris"\}\)\? \(tool call call_standin_1\)/);
      assert.doesNotMatch(text.stdout, /Failed|Stopped|Done/);

      const json = run('s1', true);
      assert.equal(json.status, 7, json.stdout + json.stderr);
      const outcome = JSON.parse(json.stdout.trim().split('\n').at(-1) ?? '') as RunEvent;
      assert.equal(outcome.kind, 'run/failed');
      if (outcome.kind !== 'run/failed') return;
      assert.equal(outcome.failure, 'paused');
      assert.deepEqual(outcome.interrupts, [{ text: 'Approve get_weather({"city": "Paris"})?', toolCallId: 'call_standin_1' }]);
      assert.equal(outcome.written.turn, 3);
      assert.deepEqual(outcome.written.removed, []);
      // Kept as written: the message, the call waiting (no output), and the usage row of the request.
      const session = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, readonly: true });
      try {
        const items = (await session.getItems()) as Json[];
        assert.deepEqual(
          items.slice(-2).map((i) => [i.role ?? i.type, i.callId ?? i.content]),
          [
            ['user', 'Weather in Paris?'],
            ['function_call', 'call_standin_1'],
          ],
        );
        const usage = await session.getTurnUsage(3);
        assert.equal((usage as { totalTokens: number } | null)?.totalTokens, 70);
      } finally {
        session.close();
      }
    });
  });

  describe('examples/python/agent_sessions_replay.py: recorded tool results replayed (forwardedProps version 2)', () => {
    let log: string;
    let dbPath: string;
    beforeEach(async () => {
      log = join(tmp.dir, 'standin.jsonl');
      dbPath = join(tmp.dir, 'conversations.db');
      await seedStandinFile(dbPath);
    });
    const calls = (): Json[] =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Json)
        : [];
    /** The model's calls, in the stand-in's STANDIN_CALLS form. */
    const modelCalls = (...c: [string, string][]) =>
      JSON.stringify(c.map(([callId, args]) => ({ name: 'get_weather', arguments: args, call_id: callId })));
    const runReplay = (tools: Json, made: string) =>
      startPython(EXAMPLE, runInput({ sessionId: 's1', branchId: 'retry-2', dbPath, text: 'Weather?', tools }), {
        PYTHONPATH: STANDIN,
        STANDIN_LOG: log,
        STANDIN_CALLS: made,
      }).done;
    /** A recorded call as the protocol lists it (docs/agent-command.md §2). */
    const recorded = (callId: string, args: string, output: unknown) => ({
      callId,
      name: 'get_weather',
      arguments: args,
      output,
      hasOutput: true,
      turn: 2,
      branchId: 'main',
    });
    const replayEvents = (events: Json[]) =>
      events.filter((e) => e.type === 'CUSTOM' && e.name === 'agent-sessions.tool-replay').map((e) => e.value);
    /** Every item the run handed the session (the stand-in's add_items), in order. */
    const written = () => calls().flatMap((c) => (c.call === 'add_items' ? (c.items as Json[]) : []));
    const toolRuns = () => calls().filter((c) => c.call === 'tool_function');

    it('arguments_key compares numbers by exact value: big integers and numbers past a float stay apart', () => {
      // As docs/replay.md has it for our own runs: 1.0 = 1e0 = 1, but 2^53 and 2^53 + 1 are two numbers, and 1e400 is
      // neither null nor an error.
      const script = [
        'import json, sys',
        'from agent_sessions_replay import arguments_key as k',
        'print(json.dumps([',
        '  k(\'{"n": 9007199254740992}\') == k(\'{"n": 9007199254740993}\'),',
        '  k(\'{"n": 1e400}\') == k(\'{"n": null}\'),',
        '  k(\'{"n": 1.0, "m": -0}\') == k(\'{ "m": 0, "n": 1e0 }\'),',
        '  k(\'{"n": \' + "1" * 400 + \'}\').startswith("j"),',
        ']))',
      ].join('\n');
      const r = spawnSync(PYTHON, ['-c', script], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: [join(REPO, 'examples/python'), STANDIN].join(':') },
      });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), [false, false, true, true]);
    });

    it('replay: matching calls get the recorded outputs, the tool never runs, each call is reported replayed with its recorded id', async () => {
      const parts = [{ type: 'input_text', text: 'Recorded: fog in Lyon' }];
      const tools = {
        mode: 'replay',
        nameOnly: [],
        recorded: [
          recorded('call_rec_a', '{"units":1,"city":"Paris"}', 'Recorded: 12°C in Paris'),
          recorded('call_rec_b', '{"units":1,"city":"Paris"}', 'Recorded: 14°C in Paris, later'),
          recorded('call_rec_c', '{"city":"Lyon"}', parts),
        ],
        hosted: [],
      };
      // Key order, spacing and number spelling differ from the recording; two identical calls take the recorded ones in
      // order; the third's recorded output is a list of content parts.
      const r = await runReplay(
        tools,
        modelCalls(
          ['call_new_1', '{"city": "Paris", "units": 1.0}'],
          ['call_new_2', '{"city":"Paris","units":1e0}'],
          ['call_new_3', '{ "city" : "Lyon" }'],
        ),
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(toolRuns(), [], 'the tool function must never run');
      const events = agUiEvents(r.stdout);
      assert.deepEqual(replayEvents(events), [
        { callId: 'call_new_1', name: 'get_weather', outcome: 'replayed', recordedCallId: 'call_rec_a' },
        { callId: 'call_new_2', name: 'get_weather', outcome: 'replayed', recordedCallId: 'call_rec_b' },
        { callId: 'call_new_3', name: 'get_weather', outcome: 'replayed', recordedCallId: 'call_rec_c' },
      ]);
      // What the session stores for each call is the recorded output exactly (the content parts as parts).
      assert.deepEqual(
        written().filter((i) => i.type === 'function_call_output'),
        [
          { call_id: 'call_new_1', output: 'Recorded: 12°C in Paris', type: 'function_call_output' },
          { call_id: 'call_new_2', output: 'Recorded: 14°C in Paris, later', type: 'function_call_output' },
          { call_id: 'call_new_3', output: parts, type: 'function_call_output' },
        ],
      );
      const results = events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => String(e.content));
      assert.deepEqual(results.slice(0, 2), ['Recorded: 12°C in Paris', 'Recorded: 14°C in Paris, later']);
      assert.deepEqual(JSON.parse(results[2]!), parts, 'the view shows the parts as stored');
      assert.equal(events.at(-1)!.type, 'RUN_FINISHED');
      assert.ok(calls().some((c) => c.call === 'store_run_usage'));
    });

    it('replay: a call that matches nothing runs live and is reported live with the nearest recorded call; name-only tools match by name', async () => {
      const tools = { mode: 'replay', nameOnly: [], recorded: [recorded('call_rec_a', '{"city":"Paris"}', 'Recorded: Paris')], hosted: [] };
      const r = await runReplay(tools, modelCalls(['call_new_1', '{"city":"Lisbon"}']));
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        toolRuns().map((c) => c.arguments),
        ['{"city":"Lisbon"}'],
      );
      assert.deepEqual(replayEvents(agUiEvents(r.stdout)), [
        { callId: 'call_new_1', name: 'get_weather', outcome: 'live', recordedCallId: 'call_rec_a' },
      ]);
      assert.deepEqual(
        written()
          .filter((i) => i.type === 'function_call_output')
          .map((i) => i.output),
        ['The weather in Lisbon is sunny.'],
      );

      rmSync(log);
      const byName = await runReplay({ ...tools, nameOnly: ['get_weather'] }, modelCalls(['call_new_1', '{"city":"Lisbon"}']));
      assert.equal(byName.code, 0, byName.stderr);
      assert.deepEqual(toolRuns(), []);
      assert.deepEqual(replayEvents(agUiEvents(byName.stdout)), [
        { callId: 'call_new_1', name: 'get_weather', outcome: 'replayed', recordedCallId: 'call_rec_a' },
      ]);
    });

    it('a recorded call without an output, or with an output the SDK would write otherwise, is not replayed: the call runs live', async () => {
      const unanswered = { ...recorded('call_rec_a', '{"city":"Paris"}', null), hasOutput: false };
      // A part with a field the SDK's structured outputs do not carry would come back without it.
      const extra = recorded('call_rec_b', '{"city":"Paris"}', [{ type: 'input_text', text: 'x', prompt_cache_breakpoint: 'y' }]);
      const r = await runReplay(
        { mode: 'replay', nameOnly: [], recorded: [unanswered, extra], hosted: [] },
        modelCalls(['call_new_1', '{"city":"Paris"}']),
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        toolRuns().map((c) => c.call_id),
        ['call_new_1'],
      );
      assert.deepEqual(replayEvents(agUiEvents(r.stdout)), [
        { callId: 'call_new_1', name: 'get_weather', outcome: 'live', recordedCallId: 'call_rec_a' },
      ]);
    });

    it('strict: a changed argument fails the run with RUN_ERROR naming the call before the tool runs; no step items, no usage', async () => {
      const tools = { mode: 'strict', nameOnly: [], recorded: [recorded('call_rec_a', '{"city":"Paris"}', 'Recorded: Paris')], hosted: [] };
      const r = await runReplay(tools, modelCalls(['call_new_1', '{"city":"Lisbon"}']));
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(toolRuns(), [], 'the tool must not run');
      const events = agUiEvents(r.stdout);
      assert.deepEqual(replayEvents(events), [
        { callId: 'call_new_1', name: 'get_weather', outcome: 'unmatched', recordedCallId: 'call_rec_a' },
      ]);
      // The model request was paid for, but a refusal reports no usage and stores none: the extension then rolls the
      // run back whole (docs/agent-command.md §5), and the SDK wrote nothing of the step.
      assert.deepEqual(events.at(-1), {
        type: 'RUN_ERROR',
        message:
          'Strict replay: the call get_weather({"city":"Lisbon"}) matches no recorded call, so it was not run and nothing was written. Nearest recorded call: get_weather({"city":"Paris"}), id call_rec_a.',
        code: 'StrictReplayError',
      });
      assert.ok(!calls().some((c) => c.call === 'store_run_usage'), JSON.stringify(calls()));
      assert.deepEqual(
        written().map((i) => i.type ?? i.role),
        ['user'],
        'only the input the SDK saves before the first request',
      );
      assert.equal(calls().at(-1)!.call, 'close');
    });

    it('version 1 (no tools): the tools run live, unwrapped, and nothing is reported', async () => {
      const input = runInput({ sessionId: 's1', branchId: 'main', dbPath, text: 'Weather?' });
      const r = await startPython(EXAMPLE, input, {
        PYTHONPATH: STANDIN,
        STANDIN_LOG: log,
        STANDIN_CALLS: modelCalls(['call_new_1', '{"city":"Paris"}']),
      }).done;
      assert.equal(r.code, 0, r.stderr);
      assert.equal((input.forwardedProps as { agentSessions: Json }).agentSessions.version, 1);
      assert.deepEqual(
        toolRuns().map((c) => c.call_id),
        ['call_new_1'],
      );
      assert.deepEqual(replayEvents(agUiEvents(r.stdout)), []);
      assert.ok(!calls().some((c) => c.call === 'Agent.clone'), 'the agent is not cloned for its tools');
    });

    it("a tools field that is not the protocol's fails the run before the session is opened", async () => {
      const r = await runReplay({ mode: 'sometimes', recorded: [] }, modelCalls());
      assert.equal(r.code, 1);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'RUN_ERROR']);
      assert.equal(events[1]!.code, 'ValueError');
      assert.match(String(events[1]!.message), /tools\.mode must be one of replay, strict, live, not 'sometimes'/);
      assert.ok(!calls().some((c) => c.call === 'AdvancedSQLiteSession'));
    });
  });

  describe('test/fixtures/agent-commands/python_turn.py writes one turn as the Python SDK 0.22.0 does', () => {
    it('continues main of ref-basic: Python-encoded JSON, numbering, updated_at, the usage row, and valid events', async () => {
      const db = copyConformance('ref-basic.db', tmp.dir);
      const before = snapshot(db);
      const timesBefore = sessionTimes(db, 'basic_session');
      const text = 'Convert 22°C to Fahrenheit 😀';
      const input = runInput({ sessionId: 'basic_session', branchId: 'main', dbPath: db, model: 'gpt-4.1-mini', text });
      const r = await runPython(PYTHON_TURN, input);
      assert.equal(r.code, 0, r.stderr);

      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), [
        'RUN_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'RUN_FINISHED',
      ]);
      const messageId = String(events[1]!.messageId);
      assert.match(messageId, /^msg_[0-9a-f]{32}$/);
      const answer = `Answer from gpt-4.1-mini: ${text}`;
      assert.equal(deltas(events), answer);
      assert.deepEqual(events.at(-1), {
        type: 'RUN_FINISHED',
        threadId: 'basic_session',
        runId: input.runId,
        usage: [{ model: 'gpt-4.1-mini', inputTokens: 21, outputTokens: 7, totalTokens: 28, reasoningTokens: 2, cachedInputTokens: 5 }],
      });

      const after = snapshot(db);
      // json.dumps defaults: ", " and ": ", ensure_ascii with lowercase \u escapes and surrogate pairs, item key order.
      assert.deepEqual(added(before.agent_messages!, after.agent_messages!, 'agent_messages'), [
        {
          id: 5,
          session_id: 'basic_session',
          message_data: '{"content": "Convert 22\\u00b0C to Fahrenheit \\ud83d\\ude00", "role": "user"}',
        },
        {
          id: 6,
          session_id: 'basic_session',
          message_data:
            `{"id": "${messageId}", "content": [{"annotations": [], "text": "Answer from gpt-4.1-mini: Convert 22\\u00b0C to ` +
            `Fahrenheit \\ud83d\\ude00", "type": "output_text", "logprobs": []}], "role": "assistant", "status": "completed", ` +
            `"type": "message"}`,
        },
      ]);
      // The shape is the one the recorded Python run stored for its assistant messages (same keys, same order).
      const recorded = JSON.parse(String(before.agent_messages![1]!.message_data)) as Json;
      const written = JSON.parse(String(after.agent_messages![5]!.message_data)) as Json;
      assert.deepEqual(Object.keys(written), Object.keys(recorded));
      assert.deepEqual(Object.keys((written.content as Json[])[0]!), Object.keys((recorded.content as Json[])[0]!));
      assert.equal(assistantText(after.agent_messages![5]!.message_data), answer);

      const structure = (id: number, messageId: number, type: string, seq: number) => ({
        id,
        session_id: 'basic_session',
        message_id: messageId,
        branch_id: 'main',
        message_type: type,
        sequence_number: seq,
        user_turn_number: 3,
        branch_turn_number: 3,
        tool_name: null,
      });
      assert.deepEqual(added(before.message_structure!, after.message_structure!, 'message_structure'), [
        structure(5, 5, 'user', 5),
        structure(6, 6, 'assistant', 6),
      ]);
      assert.deepEqual(added(before.turn_usage!, after.turn_usage!, 'turn_usage'), [
        {
          id: 3,
          session_id: 'basic_session',
          branch_id: 'main',
          user_turn_number: 3,
          ...TURN_USAGE,
          input_tokens_details: TURN_INPUT_DETAILS,
          output_tokens_details: TURN_OUTPUT_DETAILS,
        },
      ]);
      // The details texts are spelled as the recorded Python rows spell theirs.
      assert.match(String(before.turn_usage![1]!.input_tokens_details), /^\{"cache_write_tokens": \d+, "cached_tokens": \d+\}$/);
      assert.deepEqual(after.sqlite_sequence, [
        { name: 'agent_messages', seq: 6 },
        { name: 'message_structure', seq: 6 },
        { name: 'turn_usage', seq: 3 },
      ]);
      // add_items does not reserve branch ids, and the generation row was already there.
      assert.deepEqual(after.branch_reservations, []);
      assert.deepEqual(after.session_clear_generations, before.session_clear_generations);
      assert.deepEqual(after.agent_sessions, before.agent_sessions);
      assert.deepEqual(after.sqlite_master, before.sqlite_master, 'no DDL changed');
      const timesAfter = sessionTimes(db, 'basic_session');
      assert.equal(timesAfter.created_at, timesBefore.created_at);
      assert.notEqual(timesAfter.updated_at, timesBefore.updated_at, 'updated_at was not touched');
      assert.match(timesAfter.updated_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    });

    it('continues an existing non-main branch (alice/alt of ref-multisession): next turn of that branch, session-wide sequence', async () => {
      const db = copyConformance('ref-multisession.db', tmp.dir);
      const before = snapshot(db);
      const r = await runPython(
        PYTHON_TURN,
        runInput({ sessionId: 'alice', branchId: 'alt', dbPath: db, model: 'gpt-4o', text: 'And a poem?' }),
      );
      assert.equal(r.code, 0, r.stderr);
      agUiEvents(r.stdout);
      const after = snapshot(db);
      const newMessages = added(before.agent_messages!, after.agent_messages!, 'agent_messages');
      assert.deepEqual(
        newMessages.map((m) => m.id),
        [19, 20],
      );
      assert.equal(newMessages[0]!.message_data, '{"content": "And a poem?", "role": "user"}');
      assert.equal(assistantText(newMessages[1]!.message_data), 'Answer from gpt-4o: And a poem?');
      assert.deepEqual(
        added(before.message_structure!, after.message_structure!, 'message_structure').map((s) => [
          s.id,
          s.session_id,
          s.message_id,
          s.branch_id,
          s.message_type,
          s.sequence_number,
          s.user_turn_number,
          s.branch_turn_number,
        ]),
        [
          [25, 'alice', 19, 'alt', 'user', 9, 3, 3],
          [26, 'alice', 20, 'alt', 'assistant', 10, 3, 3],
        ],
      );
      assert.deepEqual(
        added(before.turn_usage!, after.turn_usage!, 'turn_usage').map((u) => [u.id, u.session_id, u.branch_id, u.user_turn_number]),
        [[8, 'alice', 'alt', 3]],
      );
      assert.deepEqual(after.branch_reservations, before.branch_reservations);
    });

    it('a fork at turn 1 (alice, from main): the branch is reserved and made, then the turn is written on it as turn 1', async () => {
      const db = copyConformance('ref-multisession.db', tmp.dir);
      const before = snapshot(db);
      const input = runInput({
        sessionId: 'alice',
        branchId: 'retry-1',
        dbPath: db,
        fork: { fromBranchId: 'main', fromTurn: 1 },
        text: 'Another book?',
      });
      const r = await runPython(PYTHON_TURN, input);
      assert.equal(r.code, 0, r.stderr);
      const events = agUiEvents(r.stdout);
      assert.equal(deltas(events), 'Answer from default: Another book?');
      assert.deepEqual(events.at(-1)!.usage, [
        { inputTokens: 21, outputTokens: 7, totalTokens: 28, reasoningTokens: 2, cachedInputTokens: 5 },
      ]);
      const after = snapshot(db);
      assert.deepEqual(added(before.branch_reservations!, after.branch_reservations!, 'branch_reservations'), [
        { session_id: 'alice', branch_id: 'retry-1' },
      ]);
      assert.deepEqual(
        added(before.message_structure!, after.message_structure!, 'message_structure').map((s) => [
          s.id,
          s.message_id,
          s.branch_id,
          s.message_type,
          s.sequence_number,
          s.user_turn_number,
          s.branch_turn_number,
          s.tool_name,
        ]),
        [
          [25, 19, 'retry-1', 'user', 9, 1, 1, null],
          [26, 20, 'retry-1', 'assistant', 10, 1, 1, null],
        ],
      );
      assert.deepEqual(added(before.turn_usage!, after.turn_usage!, 'turn_usage'), [
        {
          id: 8,
          session_id: 'alice',
          branch_id: 'retry-1',
          user_turn_number: 1,
          ...TURN_USAGE,
          input_tokens_details: TURN_INPUT_DETAILS,
          output_tokens_details: TURN_OUTPUT_DETAILS,
        },
      ]);
      assert.deepEqual(
        after.message_structure!.filter((s) => s.session_id === 'bob'),
        before.message_structure!.filter((s) => s.session_id === 'bob'),
        "bob's rows are untouched",
      );
    });

    it('a fork whose branch id was already used fails as Python does (RUN_ERROR with its message) and writes nothing', async () => {
      const db = copyConformance('ref-multisession.db', tmp.dir);
      const before = snapshot(db);
      const input = runInput({ sessionId: 'bob', branchId: 'alt', dbPath: db, fork: { fromBranchId: 'main', fromTurn: 1 }, text: 'x' });
      const r = await runPython(PYTHON_TURN, input);
      assert.equal(r.code, 1);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(events.at(-1), {
        type: 'RUN_ERROR',
        message: "Branch ID 'alt' has already been used. Choose a new branch ID.",
        code: 'ValueError',
      });
      assert.deepEqual(snapshot(db), before);
    });

    for (const scenario of [
      { name: 'continuing alice/alt', branchId: 'alt', fork: null },
      { name: 'a fork of alice/main at turn 1', branchId: 'retry-1', fork: { fromBranchId: 'main', fromTurn: 1 } },
    ]) {
      it(`leaves the same rows as this repository's Python-conformant AdvancedSQLiteSession making the same calls: ${scenario.name}`, async () => {
        const viaPython = copyConformance('ref-multisession.db', tmp.dir, 'python.db');
        const viaStore = copyConformance('ref-multisession.db', tmp.dir, 'store.db');
        const text = 'Ünïcode: “quotes” and 😀';
        const r = await runPython(
          PYTHON_TURN,
          runInput({ sessionId: 'alice', branchId: scenario.branchId, dbPath: viaPython, fork: scenario.fork, text }),
        );
        assert.equal(r.code, 0, r.stderr);
        const written = rows(viaPython, 'agent_messages').at(-1)!;
        const answerItem = JSON.parse(String(written.message_data)) as Json;

        const session = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: viaStore });
        try {
          if (scenario.fork) await session.createBranchFromTurn(scenario.fork.fromTurn, scenario.branchId);
          else await session.switchToBranch(scenario.branchId);
          await session.addItems([{ content: text, role: 'user' }]);
          await session.addItems([answerItem as never]);
          await session.storeRunUsage({
            state: {
              usage: {
                requests: 1,
                inputTokens: 21,
                outputTokens: 7,
                totalTokens: 28,
                inputTokensDetails: [{ cached_tokens: 5 }],
                outputTokensDetails: [{ reasoning_tokens: 2 }],
              },
            },
          });
        } finally {
          session.close();
        }
        assert.deepEqual(snapshot(viaPython), snapshot(viaStore));
      });
    }
  });

  describe('python_turn.py modes (AGENT_FIXTURE_MODE) for the bad-input tests', () => {
    let db: string;
    let before: Record<string, Json[]>;
    beforeEach(() => {
      db = copyConformance('ref-basic.db', tmp.dir);
      before = snapshot(db);
    });
    const input = (over: Partial<RunInputOptions> = {}) =>
      runInput({ sessionId: 'basic_session', branchId: 'main', dbPath: db, model: 'm1', text: 'hi', ...over });
    const mode = (m: string, over: Partial<RunInputOptions> = {}) => runPython(PYTHON_TURN, input(over), { AGENT_FIXTURE_MODE: m });
    const newStructure = () =>
      added(before.message_structure!, rows(db, 'message_structure'), 'message_structure').map((s) => [
        s.branch_id,
        s.message_type,
        s.user_turn_number,
      ]);

    it('exit-at-once: "boom: no config" on stderr, exit 3, no output, the file unchanged', async () => {
      const r = await mode('exit-at-once');
      assert.equal(r.code, 3);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, 'boom: no config\n');
      assert.deepEqual(snapshot(db), before);
    });

    it('invalid-json: two non-JSON lines and one non-event JSON line, then the normal run', async () => {
      const r = await mode('invalid-json');
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n').filter(Boolean);
      const bad = lines.slice(0, 3);
      assert.throws(() => JSON.parse(bad[0]!));
      assert.throws(() => JSON.parse(bad[1]!));
      assert.equal(EventSchema.safeParse(JSON.parse(bad[2]!)).success, false);
      assert.deepEqual(types(agUiEvents(lines.slice(3).join('\n'))), [
        'RUN_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'RUN_FINISHED',
      ]);
      assert.deepEqual(newStructure(), [
        ['main', 'user', 3],
        ['main', 'assistant', 3],
      ]);
    });

    it("other-branch: the turn lands on 'elsewhere' (made from main at turn 1), not on the given branch; RUN_FINISHED", async () => {
      const r = await mode('other-branch');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(agUiEvents(r.stdout).at(-1)!.type, 'RUN_FINISHED');
      assert.deepEqual(newStructure(), [
        ['elsewhere', 'user', 1],
        ['elsewhere', 'assistant', 1],
      ]);
      assert.deepEqual(
        rows(db, 'branch_reservations').map((b) => b.branch_id),
        ['main', 'elsewhere'],
        'creating a branch backfills main',
      );
      assert.deepEqual(
        added(before.turn_usage!, rows(db, 'turn_usage'), 'turn_usage').map((u) => [u.branch_id, u.user_turn_number]),
        [['elsewhere', 1]],
      );
    });

    it('error-after-write: the user message only, no usage row, RUN_ERROR "model unavailable", exit 1', async () => {
      const r = await mode('error-after-write', { fork: { fromBranchId: 'main', fromTurn: 1 }, branchId: 'retry-9' });
      assert.equal(r.code, 1);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'RUN_ERROR']);
      assert.equal(events[1]!.message, 'model unavailable');
      assert.deepEqual(newStructure(), [['retry-9', 'user', 1]]);
      assert.deepEqual(rows(db, 'turn_usage'), before.turn_usage);
    });

    it('silent: the turn and its usage are written, nothing is printed, exit 0', async () => {
      const r = await mode('silent');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '');
      assert.deepEqual(newStructure(), [
        ['main', 'user', 3],
        ['main', 'assistant', 3],
      ]);
      assert.equal(added(before.turn_usage!, rows(db, 'turn_usage'), 'turn_usage').length, 1);
    });

    it('hang: RUN_STARTED, then on SIGINT RUN_ERROR code "cancelled" and exit 130; nothing written', async () => {
      const started = startPython(PYTHON_TURN, input(), { AGENT_FIXTURE_MODE: 'hang' });
      await started.waitFor('RUN_STARTED');
      started.child.kill('SIGINT');
      const r = await started.done;
      assert.equal(r.code, 130, r.stderr);
      const events = agUiEvents(r.stdout);
      assert.deepEqual(types(events), ['RUN_STARTED', 'RUN_ERROR']);
      assert.equal(events[1]!.code, 'cancelled');
      assert.deepEqual(snapshot(db), before);
    });

    it('ignore-sigint: SIGINT is ignored (noted on stderr), SIGTERM ends it', async () => {
      const started = startPython(PYTHON_TURN, input(), { AGENT_FIXTURE_MODE: 'ignore-sigint' });
      await started.waitFor('RUN_STARTED');
      started.child.kill('SIGINT');
      await started.waitFor('ignoring SIGINT', 'stderr');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(started.child.exitCode, null, 'still running after SIGINT');
      started.child.kill('SIGTERM');
      const r = await started.done;
      assert.equal(r.signal, 'SIGTERM');
      assert.deepEqual(types(agUiEvents(r.stdout)), ['RUN_STARTED', 'TEXT_MESSAGE_CHUNK']);
    });
  });
});
