/**
 * What a run wrote to its session, and putting the branch right when the run did not complete.
 *
 * What `@openai/agents` 0.20 persists in a streamed run (observed in test/unit/agents, and in its runner's
 * `#runStreamLoop`): nothing before the model is called; when the run completes, ONE `addItems` with the user
 * input and every item of every turn (calls, outputs, the answer); when it fails or is cancelled after the request
 * was sent, ONE `addItems` with the user input only (from the loop's `finally`), never partial outputs; when it
 * stops for a tool approval, the input and the pending call without its output. If the final `addItems` itself
 * fails (a locked database), nothing of the run is stored.
 *
 * What we then do, so that no half-written turn stays behind:
 *  1. A call of this run without its output (the approval case) is popped, with everything of this run after it:
 *     the Responses API rejects a history with such a call, and Python sessions would send it.
 *  2. A run that did not complete and spent no tokens is rolled back entirely (its user message popped), so the
 *     branch is as it was and the user can simply send again.
 *  3. A run that did not complete but spent tokens keeps its user message as its turn, so the usage row has a turn
 *     to belong to (the tokens were billed); the outputs the SDK did not store are reported as not saved.
 * A run that paused waiting for input (an agent command's RUN_FINISHED with outcome `interrupt`, AG-UI 1.0) is none
 * of these: nothing of it is popped, its pending call included, since that call is what the agent resumes from.
 * Only items this run wrote are ever popped, newest first, and each pop is one transaction with the check that it is
 * that item (the store's `popItem(expected)`, docs/session-format.md §14.2), so a concurrent writer's items are never
 * removed, even one committed a moment before (the cleanup stops and says so instead). A run whose items are not
 * known to be its own alone removes nothing (an agent command's, command/commandRun.ts).
 */
import type { AgentInputItem, Session, SessionHistoryRewriteArgs, SessionHistoryTransactionArgs } from '@openai/agents';
import { BranchError } from '../store/errors';
import { HistoryConflictError, comparableItems } from '../store/session/historyTransactions';
import { normalizeForComparison, toStoredItem } from '../store/format/itemShape';
import type { SessionLogger } from '../store/types';
import type { RunSession } from './runSession';
import { itemPreview, itemType } from '../shared/itemText';
import { errorMessage } from '../shared/errorMessage';

/**
 * A `Session` that forwards to an `AdvancedSQLiteSession` and records what the runner wrote. It never forwards a
 * run context (our `getItems` takes a branch id as its second argument) and refuses `clearSession`, which would
 * delete every branch of the session (the SDK calls it only to compact history).
 */
export class RecordingSession implements Session {
  /** Items of each successful `addItems`, copied as passed. */
  readonly written: AgentInputItem[][] = [];
  /** Errors of failed `addItems` calls (their transaction was rolled back: nothing of them is stored). */
  readonly failedWrites: unknown[] = [];
  /** Items the runner popped itself. */
  readonly popped: AgentInputItem[] = [];

  /** `rewrite` changes items before they are stored (replay puts recorded outputs back exactly: replay/runReplay.ts). */
  constructor(
    readonly inner: RunSession,
    private readonly rewrite: (items: AgentInputItem[]) => AgentInputItem[] = (items) => items,
  ) {}

  getSessionId(): Promise<string> {
    return this.inner.getSessionId();
  }

  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.inner.getItems(limit);
  }

  async addItems(given: AgentInputItem[]): Promise<void> {
    const items = this.rewrite(given);
    const copy = items.map((i) => plain(i));
    try {
      await this.inner.addItems(items);
    } catch (err) {
      this.failedWrites.push(err);
      throw err;
    }
    if (copy.length > 0) this.written.push(copy);
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const item = await this.inner.popItem();
    if (item !== undefined) this.popped.push(item);
    return item;
  }

  async clearSession(): Promise<void> {
    throw new Error(
      'Clearing the session during a run is refused: it would delete every branch of the session. (The SDK compacts through replaceHistoryWithCompaction, which replaces only this branch.)',
    );
  }

  // The SDK's optional capabilities, forwarded so the runner uses the store's atomic, per-branch versions; what they
  // write is recorded like addItems, so settling the run sees it.

  applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    return this.inner.applyHistoryMutations(args);
  }

  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    await this.inner.applyHistoryTransaction(args);
    const tx = args.transaction;
    if (tx.type === 'replace_suffix') this.dropWritten(tx.expectedSuffix.length);
    const added = tx.type === 'append_items' ? tx.items : tx.replacement;
    if (added.length > 0) this.written.push(added.map((i) => plain(i)));
  }

  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    await this.inner.replaceHistoryWithCompaction(items);
    // The branch is now exactly `items`: nothing written before can be popped as this run's any more.
    this.written.length = 0;
    if (items.length > 0) this.written.push(items.map((i) => plain(i)));
  }

  /** As the store's session answers it (items as they read back once stored); pure, so it runs here. */
  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[] {
    return normalizeForComparison(items);
  }

  /** Forgets the newest `count` recorded items (a suffix the runner replaced). */
  private dropWritten(count: number): void {
    let left = count;
    while (left > 0 && this.written.length > 0) {
      const last = this.written[this.written.length - 1] as AgentInputItem[];
      const take = Math.min(left, last.length);
      last.splice(last.length - take, take);
      if (last.length === 0) this.written.pop();
      left -= take;
    }
  }

  /** Every item written, in order. */
  writtenItems(): AgentInputItem[] {
    return this.written.flat();
  }
}

/** The result of `settleRun`. */
export interface SettleResult {
  kept: AgentInputItem[];
  removed: AgentInputItem[];
  /** Why the cleanup stopped early (another writer, a locked database), or undefined. */
  problem?: string;
}

/** Item types that need a matching output in the same history, and the types of their outputs. */
const OUTPUT_TYPES: Record<string, string[]> = {
  function_call: ['function_call_result', 'function_call_output'],
  custom_tool_call: ['custom_tool_call_output'],
  computer_call: ['computer_call_result', 'computer_call_output'],
  shell_call: ['shell_call_output'],
  local_shell_call: ['local_shell_call_output'],
  apply_patch_call: ['apply_patch_call_output'],
};

/** The call id an item carries (`callId` in the JS SDK, `call_id` in Python's encoding), if any. */
export function callIdOf(item: AgentInputItem): string | undefined {
  const i = item as { callId?: unknown; call_id?: unknown };
  const id = i.callId ?? i.call_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * What pairs an item with its call: the item itself, or for the store's opaque item (`type: 'unknown'`, its stored
 * form in `providerData`: a tool output the SDK's item cannot carry exactly, as replay may write a recorded one)
 * that stored form.
 */
function pairingShape(item: AgentInputItem): AgentInputItem {
  const i = item as { type?: unknown; providerData?: unknown };
  return i.type === 'unknown' && i.providerData !== null && typeof i.providerData === 'object' ? (i.providerData as AgentInputItem) : item;
}

/** Index of the first call in `items` whose output is not in `items`, or -1. */
export function firstUnansweredCall(items: readonly AgentInputItem[]): number {
  const shapes = items.map(pairingShape);
  return shapes.findIndex((item, i) => {
    const outputs = OUTPUT_TYPES[itemType(item)];
    const id = callIdOf(item);
    if (!outputs || id === undefined) return false;
    return !shapes.slice(i + 1).some((o) => outputs.includes(itemType(o)) && callIdOf(o) === id);
  });
}

/**
 * Puts the branch right after a run (see the module comment). `completed`: the run finished normally; `spent`:
 * the run used tokens; `paused`: the run waits for input, and everything it wrote stays. Pops only items of
 * `written`, newest first, each only if it is the branch's newest, checked in the pop's transaction
 * (`popItem(expected)`). `unproven` (why `written` may not be the run's alone): nothing is removed, and the result's
 * `problem` says why.
 */
export async function settleRun(
  session: RunSession,
  written: readonly AgentInputItem[],
  outcome: { completed: boolean; spent: boolean; paused?: boolean },
  unproven?: string,
): Promise<SettleResult> {
  let keepCount = written.length;
  if (!outcome.paused) {
    const unanswered = firstUnansweredCall(written);
    if (unanswered >= 0) keepCount = unanswered;
    if (!outcome.completed && !outcome.spent) keepCount = 0;
  }
  if (keepCount < written.length && unproven !== undefined) {
    return {
      kept: [...written],
      removed: [],
      problem: `${unproven}, so ${written.length - keepCount} item(s) of this run were left in place`,
    };
  }
  const removed: AgentInputItem[] = [];
  for (let i = written.length - 1; i >= keepCount; i--) {
    const expected = written[i] as AgentInputItem;
    try {
      // The check and the pop are one transaction: an item committed a moment before by another writer is never popped.
      await session.popItem(expected);
      removed.unshift(expected);
    } catch (err) {
      return {
        kept: written.slice(0, i + 1),
        removed,
        problem:
          err instanceof HistoryConflictError
            ? `the branch changed while the run was cleaning up (another writer added items), so ${i + 1 - keepCount} item(s) of this run were left in place`
            : `removing the run's unfinished items failed (${errorMessage(err)})`,
      };
    }
  }
  return { kept: written.slice(0, keepCount), removed };
}

/**
 * The run's turn on its branch (the one its usage belongs to): the one turn newer than `turnBefore` (the branch's
 * newest before the run wrote, 0 when it had none) whose items begin with the run's kept items from their last user
 * message on, compared as stored. The SDK writes a run's items in one `addItems` (module comment), so they are one
 * turn's first items (an input of several user messages makes several turns: the last is the run's, as Python's
 * `store_run_usage` takes it); a turn another writer added meanwhile, before or after it, starts with its own user
 * message. A number, or why the turn cannot be told: none matches, or another writer added a turn just like it (then
 * neither is claimed).
 */
export async function findOwnTurn(
  session: Pick<RunSession, 'getLatestTurnNumber' | 'getTurnStoredItems'>,
  kept: readonly AgentInputItem[],
  turnBefore: number,
): Promise<{ turn: number } | { problem: string }> {
  const own = kept.slice(Math.max(0, kept.map(isUserMessage).lastIndexOf(true)));
  const wanted = comparableItems(own.map((item) => toStoredItem(item)));
  const latest = (await session.getLatestTurnNumber()) ?? 0;
  const matches: number[] = [];
  // Newest first: the run's turn is near the branch's end, and only turns added since the run started are looked at.
  for (let turn = latest; turn > turnBefore; turn--) {
    const items = await session.getTurnStoredItems(turn);
    if (items.length >= own.length && comparableItems(items.slice(0, own.length)) === wanted) matches.push(turn);
  }
  if (matches.length === 1) return { turn: matches[0] as number };
  return {
    problem:
      matches.length === 0
        ? "this run's turn was not found on the branch"
        : `turns ${matches.join(', ')} all hold this run's items (another writer added the same turn), so which one is this run's cannot be told`,
  };
}

/** Whether an item is a user message: the one a run's turn starts with. */
export function isUserMessage(item: AgentInputItem): boolean {
  return 'role' in item && item.role === 'user';
}

/** A key that identifies an item across the SDK's normalisation (ids dropped, provider data added). */
export function itemKey(item: AgentInputItem): string {
  const type = itemType(item);
  const id = callIdOf(item);
  if (id !== undefined) return `${type}:${id}`;
  const i = item as { role?: unknown };
  if (typeof i.role === 'string') return `${i.role}:${itemPreview(item)}`;
  return `${type}:${itemPreview(item)}`;
}

/** A JSON copy: what the store will hold, and immune to later mutation by the runner. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * `settleRun`, then the fork made for the run deleted when it kept nothing of it: it was part of the run. (Its name
 * stays used, as every branch name does; a fork that was never made has nothing to delete.) Never throws: a failure
 * becomes the result's `problem`. Shared by the SDK runner's runs and agent-command runs. `unproven`: as `settleRun`'s.
 */
export async function settleBranch(
  session: RunSession,
  written: readonly AgentInputItem[],
  outcome: { completed: boolean; spent: boolean; paused?: boolean },
  fork: { branchId: string; exists: boolean } | undefined,
  unproven?: string,
): Promise<SettleResult & { forkDeleted: boolean }> {
  let settled: SettleResult;
  try {
    settled = await settleRun(session, written, outcome, unproven);
  } catch (err) {
    settled = { kept: [...written], removed: [], problem: `checking the branch failed (${errorMessage(err)})` };
  }
  if (!fork || settled.kept.length > 0 || settled.problem) return { ...settled, forkDeleted: false };
  if (!fork.exists) return { ...settled, forkDeleted: true };
  try {
    await session.deleteBranch(fork.branchId, true);
    return { ...settled, forkDeleted: true };
  } catch (err) {
    if (err instanceof BranchError && /does not exist/.test(err.message)) return { ...settled, forkDeleted: true };
    return { ...settled, forkDeleted: false, problem: `deleting the branch made for this run failed (${errorMessage(err)})` };
  }
}

/** A store logger that keeps what the store logged instead of throwing (to say usage was not stored) and logs it. */
export function problemLogger(problems: string[], log: (line: string) => void): SessionLogger {
  return {
    error: (message, err) => {
      const line = `${message}: ${errorMessage(err)}`;
      problems.push(line);
      log(line);
    },
    warn: (message) => {
      problems.push(message);
      log(message);
    },
  };
}
