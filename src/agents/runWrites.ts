/**
 * Where a run's writes went, for every kind of run: what lands on the run's branch is the run's, what our other runs
 * wrote meanwhile (*Retry with Several Models* runs several at once in one session, each on its own branch) is theirs,
 * and anything else is "elsewhere": reported as a failure of the run and left where it is (docs/agent-command.md §3),
 * since those rows are not the run's to remove. The SDK runner writes only through its recording session, so only an
 * agent command, which writes through its own, can write elsewhere; both note the branch they write to here.
 */
import { resolve } from 'node:path';
import type { TableNames, WriteMark, WritesByBranch } from '../store';
import { errorMessage } from '../shared/errorMessage';
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
  /** How many messages landed on the run's branch. */
  ownItems: number;
  /** The user turn of the run's newest message on its branch (from its structure row), or null. */
  ownTurn: number | null;
  /** Messages written neither to the run's branch nor to a branch of our other runs. */
  elsewhere: WritesByBranch[];
}

/** Where a run wrote since `mark` (taken when it started, at `since`); a failed read is logged and finds nothing. */
export async function writesOfRun(args: {
  store: RunStore;
  dbPath: string;
  tables: TableNames;
  mark: WriteMark;
  since: number;
  sessionId: string;
  branchId: string;
  log: (line: string) => void;
}): Promise<RunWrites> {
  const found: RunWrites = { ownItems: 0, ownTurn: null, elsewhere: [] };
  try {
    const ours = branchesOfRunsSince(args.dbPath, args.sessionId, args.since);
    for (const w of await args.store.writesSince(args.dbPath, args.tables, args.mark)) {
      const sameSession = w.sessionId === args.sessionId;
      if (sameSession && w.branchId === args.branchId) {
        found.ownItems += w.items;
        found.ownTurn = w.lastUserTurn;
      } else if (!(sameSession && w.branchId !== null && ours.has(w.branchId))) found.elsewhere.push(w);
    }
  } catch (err) {
    args.log(`Checking where the command wrote failed: ${errorMessage(err)}`);
  }
  return found;
}

/** The failure of a run that wrote elsewhere: where, and that it was left there. `who` names the agent. */
export function elsewhereMessage(who: string, elsewhere: readonly WritesByBranch[], branchId: string, sessionId: string): string {
  const places = elsewhere
    .map((w) =>
      w.branchId === null
        ? `${w.items} item(s) without a branch to session '${w.sessionId}'`
        : `${w.items} item(s) to branch '${w.branchId}' of session '${w.sessionId}'`,
    )
    .join(', ');
  return `${who} wrote ${places}, not to branch '${branchId}' of session '${sessionId}' it was given; they were left there.`;
}
