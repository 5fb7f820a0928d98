/**
 * The differential harness (issue 11, item 3): a scenario is run twice with the real `@openai/agents` runner, once on
 * the SDK's own `MemorySession` and once on `AdvancedSQLiteSession` (a temp file, the driver the process selects),
 * and the two runs must agree:
 * - after every run (and at every explicit checkpoint) the sessions' `getItems()`, converted to the stored (Responses)
 *   shape with `toStoredItem`, are deep-equal, key order included;
 * - what each run ended with (final output, error class and message, interruptions) is the same;
 * - the models received the same inputs (after the same conversion), so the runner saw the same history.
 * On the SQLite side the harness also checks, at every checkpoint, that our metadata is coherent with the items: one
 * conversation turn per user message, the current branch's row in listBranches, items stored in the Responses shape
 * (`getStoredItems()` equals the read items converted back), and one usage row per turn that `storeRunUsage` wrote.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import {
  MemorySession,
  run,
  type Agent,
  type AgentInputItem,
  type NonStreamRunOptions,
  type RunResult,
  type RunState,
  type Session,
  type StreamedRunResult,
} from '@openai/agents';
import { AdvancedSQLiteSession, toStoredItem, type TurnUsageRow } from '../../src/store';
import { DifferentialModel, type ScriptedModelReply } from './differentialModel';
import { tempDir } from './tempFiles';

export type SideKind = 'memory' | 'sqlite';
export const SESSION_ID = 'diff-session';

type Json = Record<string, unknown>;

export interface Snapshot {
  label: string;
  items: Json[];
}

/** How a run ended, in terms both sides must agree on. */
export interface RunNote {
  label: string;
  finalOutput?: unknown;
  error?: string;
  interruptions?: number;
}

/** What a scenario run returned: the result, or the error it threw. */
export interface Outcome {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- results of any run
  result?: RunResult<any, AnyAgent> | StreamedRunResult<any, AnyAgent>;
  error?: unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- scenarios use agents of every context and output type
export type AnyAgent = Agent<any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the state of any such run
export type AnyRunState = RunState<any, AnyAgent>;
type RunOptions = Omit<NonStreamRunOptions<unknown, AnyAgent>, 'stream'>;
type UsageNumbers = { requests: number; inputTokens: number; outputTokens: number; totalTokens: number };

const JS_ONLY_TYPES = ['function_call_result', 'computer_call_result', 'hosted_tool_call', 'unknown'];
const JS_ONLY_KEYS = ['callId', 'providerData'];

/**
 * Items in the stored (Responses) shape, the common ground of the comparison, as JSON holds them (a key whose value is
 * undefined, such as the `id: undefined` the SDK's compaction wrapper writes, is not part of an item's JSON).
 */
export function storedShape(items: readonly AgentInputItem[]): Json[] {
  return items.map((i) => JSON.parse(JSON.stringify(toStoredItem(i))) as Json);
}

export function usageOf(state: AnyRunState): UsageNumbers {
  const u = state.usage;
  return { requests: u.requests, inputTokens: u.inputTokens, outputTokens: u.outputTokens, totalTokens: u.totalTokens };
}

export class Side {
  readonly snapshots: Snapshot[] = [];
  readonly notes: RunNote[] = [];
  readonly models: DifferentialModel[] = [];
  /** Inputs of model calls made in child processes, in order. */
  readonly childModelInputs: AgentInputItem[][] = [];
  /** Anything else a scenario records that both sides must agree on (compaction requests, error messages…). */
  readonly extra: unknown[] = [];
  readonly memory: MemorySession | undefined;
  readonly sqlite: AdvancedSQLiteSession | undefined;
  readonly dir: string;
  readonly dbPath: string;
  /** Expected usage rows per branch and user turn, from the storeRunUsage calls made (SQLite side). */
  readonly expectedUsage = new Map<string, Map<number, UsageNumbers>>();
  private readonly removeDir: () => void;
  private readonly extraSessions: AdvancedSQLiteSession[] = [];

  constructor(readonly kind: SideKind) {
    const t = tempDir(`asi-diff-${kind}-`);
    this.dir = t.dir;
    this.removeDir = t.cleanup;
    this.dbPath = join(this.dir, 'session.db');
    if (kind === 'memory') this.memory = new MemorySession({ sessionId: SESSION_ID });
    else this.sqlite = new AdvancedSQLiteSession({ sessionId: SESSION_ID, dbPath: this.dbPath, createTables: true });
  }

  /** The session itself (MemorySession or AdvancedSQLiteSession). */
  get base(): Session {
    return (this.memory ?? this.sqlite) as Session;
  }

  /** The session a run or a wrapper should get for "the current branch": the branch view on SQLite. */
  get branchSession(): Session {
    return this.memory ?? (this.sqlite as AdvancedSQLiteSession).currentBranchSession();
  }

  /** A model tracked for the input comparison; `prefix` keeps ids of several models in one scenario apart. */
  model(replies: ScriptedModelReply[], prefix = 'm', streamDelayMs = 0): DifferentialModel {
    const m = new DifferentialModel(replies, prefix, streamDelayMs);
    this.models.push(m);
    return m;
  }

  /** Another instance on the same file (SQLite side), closed with the side. */
  openAnother(options: Partial<ConstructorParameters<typeof AdvancedSQLiteSession>[0]> = {}): AdvancedSQLiteSession {
    const s = new AdvancedSQLiteSession({ sessionId: SESSION_ID, dbPath: this.dbPath, ...options });
    this.extraSessions.push(s);
    return s;
  }

  /** A non-streaming run; never throws (the error is part of the outcome), then records usage and checkpoints. */
  async run(label: string, agent: AnyAgent, input: Parameters<typeof run>[1], options: RunOptions = {}): Promise<Outcome> {
    let outcome: Outcome;
    try {
      outcome = { result: await run(agent, input, { session: this.base, ...options }) };
    } catch (error) {
      outcome = { error };
    }
    await this.settle(label, outcome);
    return outcome;
  }

  /**
   * A streaming run consumed to the end; `abortAfterDeltas` aborts it through an AbortSignal once that many text
   * deltas have arrived (cancel mid-stream).
   */
  async stream(
    label: string,
    agent: AnyAgent,
    input: string | AgentInputItem[],
    options: { session?: Session; abortAfterDeltas?: number } = {},
  ): Promise<Outcome & { deltas: string[] }> {
    const deltas: string[] = [];
    const controller = new AbortController();
    let outcome: Outcome;
    try {
      const result = await run(agent, input, { session: options.session ?? this.base, stream: true, signal: controller.signal });
      try {
        for await (const event of result) {
          if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') {
            deltas.push(event.data.delta);
            if (options.abortAfterDeltas !== undefined && deltas.length >= options.abortAfterDeltas) controller.abort();
          }
        }
        await result.completed;
      } catch (error) {
        outcome = { result, error };
      }
      outcome ??= result.error === undefined || result.error === null ? { result } : { result, error: result.error };
    } catch (error) {
      outcome = { error };
    }
    await this.settle(label, outcome);
    return { ...outcome, deltas };
  }

  /** Notes how a run ended, stores its usage (SQLite), and takes a checkpoint. */
  async settle(label: string, outcome: Outcome): Promise<void> {
    const note: RunNote = { label };
    if (outcome.result) {
      note.interruptions = outcome.result.interruptions.length;
      const cancelled = 'cancelled' in outcome.result && outcome.result.cancelled;
      // finalOutput exists only for a run that finished (reading it otherwise logs a warning).
      if (note.interruptions === 0 && !cancelled && outcome.error === undefined) note.finalOutput = outcome.result.finalOutput ?? null;
    }
    if (outcome.error !== undefined) note.error = describeError(outcome.error);
    this.notes.push(note);
    const state = outcome.result?.state ?? (outcome.error as { state?: AnyRunState } | undefined)?.state;
    if (state) await this.storeUsage(state);
    await this.checkpoint(label);
  }

  /** storeRunUsage on the SQLite side, remembering which (branch, turn) row it must have written. */
  async storeUsage(state: AnyRunState): Promise<void> {
    if (!this.sqlite) return;
    await this.sqlite.storeRunUsage({ state });
    const turns = [...(await this.sqlite.getConversationByTurns()).keys()].filter((t): t is number => t !== null);
    if (turns.length === 0) return;
    this.recordUsage(this.sqlite.getCurrentBranchId(), Math.max(...turns), usageOf(state));
  }

  recordUsage(branch: string, turn: number, usage: UsageNumbers): void {
    let rows = this.expectedUsage.get(branch);
    if (!rows) this.expectedUsage.set(branch, (rows = new Map()));
    rows.set(turn, usage);
  }

  /** Snapshot of the session's items (stored shape); on SQLite, checks the metadata against them. */
  async checkpoint(label: string): Promise<Json[]> {
    const items = await this.base.getItems();
    const stored = storedShape(items);
    this.snapshots.push({ label, items: stored });
    if (this.sqlite) await checkCoherence(this, label, items);
    return stored;
  }

  close(): void {
    for (const s of [this.sqlite, ...this.extraSessions]) {
      try {
        s?.close();
      } catch {
        // already closed
      }
    }
    this.removeDir();
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.constructor.name}: ${error.message}`;
  return String(error);
}

function userCount(items: readonly AgentInputItem[]): number {
  return items.filter((i) => (i as Json).role === 'user').length;
}

/** Our metadata agrees with the items the current branch holds. */
export async function checkCoherence(side: Side, label: string, items: AgentInputItem[], branchId?: string): Promise<void> {
  const s = side.sqlite as AdvancedSQLiteSession;
  const branch = branchId ?? s.getCurrentBranchId();
  const at = `${label} (branch ${branch})`;
  // Stored in the Responses shape: what getItems returns converts back to exactly what is stored.
  const stored = (await s.getStoredItems(undefined, branch)) as Json[];
  assert.deepStrictEqual(stored, storedShape(items), `${at}: getStoredItems() differs from getItems() converted to the stored shape`);
  for (const item of stored) {
    assert.ok(!JS_ONLY_TYPES.includes(String(item.type)), `${at}: a JS-only item type is stored: ${JSON.stringify(item)}`);
    for (const key of JS_ONLY_KEYS) assert.ok(!(key in item), `${at}: a JS-only key '${key}' is stored: ${JSON.stringify(item)}`);
  }
  // One conversation turn per user message.
  const turns = await s.getConversationTurns(branch);
  assert.equal(
    turns.length,
    userCount(items),
    `${at}: getConversationTurns() has ${turns.length} turns for ${userCount(items)} user messages`,
  );
  for (let i = 1; i < turns.length; i++) assert.ok(turns[i]!.turn > turns[i - 1]!.turn, `${at}: turn numbers are not increasing`);
  // The branch's row in listBranches.
  const branches = await s.listBranches();
  const row = branches.find((b) => b.branchId === branch);
  if (items.length > 0) {
    assert.ok(row, `${at}: listBranches() has no row for the branch`);
    assert.equal(row.messageCount, items.length, `${at}: listBranches() messageCount`);
    assert.equal(row.userTurns, userCount(items), `${at}: listBranches() userTurns`);
  }
  if (branchId === undefined) {
    // listBranches lists branches that hold items; the current one is marked, and only it.
    assert.deepStrictEqual(
      branches.filter((b) => b.isCurrent).map((b) => b.branchId),
      row ? [branch] : [],
      `${at}: listBranches() current marks`,
    );
  }
  // One usage row per turn storeRunUsage wrote, with the run's numbers.
  const rows = (await s.getTurnUsage(null, branch)) as TurnUsageRow[];
  const expected = [...(side.expectedUsage.get(branch) ?? new Map<number, UsageNumbers>())]
    .sort(([a], [b]) => a - b)
    .map(([turn, u]) => ({ turn, ...u }));
  assert.deepStrictEqual(
    rows.map((r) => ({
      turn: r.userTurnNumber,
      requests: r.requests,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      totalTokens: r.totalTokens,
    })),
    expected,
    `${at}: turn_usage rows`,
  );
}

export type Scenario = (side: Side) => Promise<void>;

/** Runs `scenario` on both sides and asserts they agree; returns both sides (already closed) for extra checks. */
export async function differential(scenario: Scenario): Promise<{ memory: Side; sqlite: Side }> {
  const memory = new Side('memory');
  const sqlite = new Side('sqlite');
  try {
    await scenario(memory);
    await scenario(sqlite);
    compareSides(memory, sqlite);
    return { memory, sqlite };
  } finally {
    memory.close();
    sqlite.close();
  }
}

export function compareSides(memory: Side, sqlite: Side): void {
  assert.deepStrictEqual(
    sqlite.notes,
    memory.notes,
    'the runs ended differently on AdvancedSQLiteSession (actual) and MemorySession (expected)',
  );
  assert.deepStrictEqual(sqlite.extra, memory.extra, 'other observations on AdvancedSQLiteSession (actual) vs MemorySession (expected)');
  assert.equal(sqlite.snapshots.length, memory.snapshots.length, 'number of checkpoints');
  memory.snapshots.forEach((m, i) => {
    const s = sqlite.snapshots[i]!;
    assert.equal(s.label, m.label);
    assert.deepStrictEqual(
      s.items,
      m.items,
      `after '${m.label}': getItems() of AdvancedSQLiteSession (actual) vs MemorySession (expected)`,
    );
    assert.equal(JSON.stringify(s.items), JSON.stringify(m.items), `after '${m.label}': key order of the items`);
  });
  const inputs = (side: Side) => [
    ...side.models.flatMap((m) => m.requests.map((r) => storedShape(r.input))),
    ...side.childModelInputs.map((i) => storedShape(i)),
  ];
  assert.deepStrictEqual(inputs(sqlite), inputs(memory), 'model inputs on AdvancedSQLiteSession (actual) vs MemorySession (expected)');
}
