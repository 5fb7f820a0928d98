/**
 * Where a run's writes went, for every kind of run that writes through a session of its own (an agent command): its
 * turn on its branch, told by its user message (`ownSpan`); what our other runs wrote meanwhile (*Retry with Several
 * Models* runs several at once in one session, each on its own branch), theirs; and anything else. The file is shared
 * (docs/session-format.md §1), so once the run's turn is on its branch, the rest is another writer's: noted, never
 * removed, never the run's failure. A run with no turn on its branch that wrote elsewhere is reported as failed
 * (docs/agent-command.md §3), and those rows are left where they are, since they are not the run's to remove. The SDK
 * runner writes only through its recording session, which knows what it wrote; both note the branch they write to.
 */
import { resolve } from 'node:path';
import type { TableNames, WriteMark, WritesByBranch } from '../store';
import { errorMessage } from '../shared/errorMessage';
import { isMessageItem, messageText } from '../shared/itemText';
import type { RunStore } from './runSession';

/** A run writing to a branch, from when it started to when it ended (unset while it runs). */
interface RunSpan {
  key: string;
  branchId: string;
  started: number;
  ended?: number;
}
const spans: RunSpan[] = [];
/** Ended runs are kept for a while, so that a run that started before they ended still sees them: this many. */
const MAX_ENDED_SPANS = 200;

function sessionKey(dbPath: string, sessionId: string): string {
  return `${resolve(dbPath)}\u0000${sessionId}`;
}

/** Notes that a run writes to `branchId` from now on; call the result when it has ended. */
export function noteRunBranch(dbPath: string, sessionId: string, branchId: string): () => void {
  const span: RunSpan = { key: sessionKey(dbPath, sessionId), branchId, started: Date.now() };
  spans.push(span);
  return () => {
    span.ended = Date.now();
    const ended = spans.filter((s) => s.ended !== undefined);
    if (ended.length > MAX_ENDED_SPANS) spans.splice(spans.indexOf(ended[0] as RunSpan), 1);
  };
}

/** The branches of the session that runs of this process wrote to at some time since `since`. */
function branchesOfRunsSince(dbPath: string, sessionId: string, since: number): Set<string> {
  const key = sessionKey(dbPath, sessionId);
  return new Set(spans.filter((s) => s.key === key && (s.ended === undefined || s.ended >= since)).map((s) => s.branchId));
}

/** What a run that writes through a session of its own wrote, read from the file's new messages. */
export interface RunWrites {
  /**
   * The run's items on its branch, as stored, oldest first: its turn (`ownSpan`). Empty when no new user message landed
   * there.
   */
  own: unknown[];
  /** Why `own` is not known to be the run's alone (it was found by position only), or undefined. */
  unproven?: string;
  /** The user turn of the run's newest user message on its branch, or null. */
  ownTurn: number | null;
  /** How many new items on the run's branch are not in `own`: another writer's (they are left alone). */
  othersOnBranch: number;
  /** Messages written neither to the run's branch nor to a branch of our other runs. */
  elsewhere: WritesByBranch[];
}

/** How often the branch's new items are read again when another writer keeps adding to it meanwhile. */
const READ_ATTEMPTS = 5;

/** The text of a user message (as stored or in the SDK's shape: the same either way), or undefined. */
function userText(item: unknown): string | undefined {
  return isMessageItem(item) && item.role === 'user' ? messageText(item.content) : undefined;
}

/**
 * Which of the branch's new items (oldest first) are the run's: from its user message — the first new user message
 * with the text of the first user message the run gave (`input`) — up to the next user message that is not the next
 * one the run gave. The agent writes one turn, and another writer's turn starts with its own user message; what comes
 * before the run's message, or after the turn, is another writer's. When no new user message has the run's text (an
 * agent that stores another message than `input`), the first new user message starts the turn, found by position only
 * (`proven` false): it may be another writer's. Undefined when no new user message landed.
 */
export function ownSpan(
  items: readonly unknown[],
  input: string | readonly unknown[],
): { start: number; end: number; proven: boolean } | undefined {
  const given = typeof input === 'string' ? [input] : input.map(userText).filter((t): t is string => t !== undefined);
  const texts = items.map(userText);
  const first = given[0];
  let start = first === undefined ? -1 : texts.indexOf(first);
  const proven = start >= 0;
  if (!proven) start = texts.findIndex((t) => t !== undefined);
  if (start < 0) return undefined;
  let next = 1;
  let end = start + 1;
  for (; end < items.length; end++) {
    const text = texts[end];
    if (text === undefined) continue;
    if (!proven || text !== given[next]) break;
    next++;
  }
  return { start, end, proven };
}

/**
 * Where a run wrote since `mark` (taken when it started, at `since`), and which new items of its branch are its own
 * (`ownSpan`; `readBranch` reads the newest items of the run's branch as stored, unset when the branch does not
 * exist). A failed read is logged and finds nothing.
 */
export async function writesOfRun(args: {
  store: RunStore;
  dbPath: string;
  tables: TableNames;
  mark: WriteMark;
  since: number;
  sessionId: string;
  branchId: string;
  input: string | readonly unknown[];
  readBranch: ((limit: number) => Promise<unknown[]>) | undefined;
  log: (line: string) => void;
}): Promise<RunWrites> {
  const found: RunWrites = { own: [], ownTurn: null, othersOnBranch: 0, elsewhere: [] };
  const onBranch = (writes: readonly WritesByBranch[]) =>
    writes.find((w) => w.sessionId === args.sessionId && w.branchId === args.branchId);
  try {
    const ours = branchesOfRunsSince(args.dbPath, args.sessionId, args.since);
    let writes: WritesByBranch[] = [];
    let items: unknown[] = [];
    let steady = false;
    // New rows go to the branch's end, so its new items are its newest `items`: read between two looks at the count,
    // so that what another writer adds meanwhile does not shift them (read again then).
    for (let attempt = 0; attempt < READ_ATTEMPTS && !steady; attempt++) {
      writes = await args.store.writesSince(args.dbPath, args.tables, args.mark);
      const before = onBranch(writes);
      items = before && args.readBranch ? await args.readBranch(before.items) : [];
      const after = onBranch(await args.store.writesSince(args.dbPath, args.tables, args.mark));
      steady = before?.items === after?.items && before?.lastUserTurn === after?.lastUserTurn;
    }
    const mine = onBranch(writes);
    found.elsewhere = writes.filter((w) => w !== mine && !(w.sessionId === args.sessionId && w.branchId !== null && ours.has(w.branchId)));
    const span = ownSpan(items, args.input);
    found.othersOnBranch = items.length - (span ? span.end - span.start : 0);
    if (!span || !mine || mine.lastUserTurn === null) return found;
    found.own = items.slice(span.start, span.end);
    const userMessagesAfter = items.slice(span.end).filter((i) => userText(i) !== undefined).length;
    found.ownTurn = mine.lastUserTurn - userMessagesAfter;
    if (!span.proven) found.unproven = "its user message is not the one the run gave (its turn cannot be told apart from another writer's)";
    else if (!steady) found.unproven = 'another writer kept adding to the branch while the run read it';
  } catch (err) {
    args.log(`Checking where the command wrote failed: ${errorMessage(err)}`);
  }
  return found;
}

/**
 * What other writers wrote during the run, for the outcome (not a failure: the file is shared, docs/session-format.md
 * §1): the new items of the run's branch that are not its turn, and, once the run's turn is on its branch, what was
 * written elsewhere. Undefined when there is nothing to say.
 */
export function otherWritersNote(
  othersOnBranch: number,
  elsewhere: readonly WritesByBranch[],
  branchId: string,
  hasTurn: boolean,
): string | undefined {
  if (!hasTurn)
    return othersOnBranch > 0
      ? `${othersOnBranch} item(s) without a user message were written to branch '${branchId}' meanwhile; they are no turn of this run and were left there.`
      : undefined;
  const places = [
    ...(othersOnBranch > 0 ? [`${othersOnBranch} item(s) to branch '${branchId}' that are not this run's turn`] : []),
    ...elsewhere.map(placeOf),
  ];
  return places.length > 0 ? `Another writer of the file wrote meanwhile ${places.join(', ')}; they were left there.` : undefined;
}

function placeOf(w: WritesByBranch): string {
  return w.branchId === null
    ? `${w.items} item(s) without a branch to session '${w.sessionId}'`
    : `${w.items} item(s) to branch '${w.branchId}' of session '${w.sessionId}'`;
}

/** The failure of a run that wrote elsewhere: where, and that it was left there. `who` names the agent. */
export function elsewhereMessage(who: string, elsewhere: readonly WritesByBranch[], branchId: string, sessionId: string): string {
  const places = elsewhere.map(placeOf).join(', ');
  return `${who} wrote ${places}, not to branch '${branchId}' of session '${sessionId}' it was given; they were left there.`;
}
