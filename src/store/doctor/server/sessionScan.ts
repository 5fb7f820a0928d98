/**
 * One server session's entries seen in order, once (PostgreSQL rows by `created_at, id`; a Redis list by position):
 * each entry that is not an item is a `malformed-item` finding, and the last item the SDKs would read is kept, so the
 * end of the scan says whether the session ends in a tool call. Only that one item and a turn counter are kept, never
 * the entries, so a session of any length costs the same memory.
 */
import { messageTypeOf } from '../../format/itemClassification';
import { pythonJsonLoads } from '../../format/pythonJson';
import type { Finding } from '../checkContext';
import { OUTPUT_TYPE_OF } from '../checks/danglingToolCall';
import { entryProblem } from '../checks/malformedItem';

/** One stored entry as the server gave it. */
export interface ServerEntry {
  /** The number the report gives it: the PostgreSQL row id, or the 1-based Redis list position. */
  ref: number;
  /** The stored text; null when the bytes are not UTF-8 (Redis) or the column is NULL (`textIsNull`, PostgreSQL). */
  text: string | null;
  /** Set when `text` is null because `message_data` is NULL (a schema without SQLAlchemy's NOT NULL). */
  textIsNull?: boolean;
}

/** A session's last item when it is a tool call: its output is what the end of the scan looks for. */
export interface TipCall {
  ref: number;
  turn: number;
  callType: string;
  callId: string;
  name: string | null;
}

/** The inspector's single branch of a server session (docs/session-format.md §15). */
export const SERVER_BRANCH = 'main';

export class SessionScan {
  /** Turns as the inspector numbers them (§7): each user item opens the next; 0 before the first. */
  private turn = 0;
  private tip: TipCall | null = null;

  /**
   * @param rowsKey what the report names the entries' numbers after: the messages table, or the list key.
   * @param where words for one entry in a finding's detail ("row 12", "entry 3"), given its `ref`.
   */
  constructor(
    readonly session: string,
    private readonly rowsKey: string,
    private readonly where: (ref: number) => string,
    private readonly add: (f: Finding) => void,
  ) {}

  see(entry: ServerEntry): void {
    const decoded = entry.text === null ? null : pythonJsonLoads(entry.text);
    const problem = entry.textIsNull ? NULL_PROBLEM : entryProblem(decoded);
    if (problem !== null) {
      this.add({
        kind: 'malformed-item',
        session: this.session,
        rows: { [this.rowsKey]: [entry.ref] },
        detail: `${this.where(entry.ref)} of session ${JSON.stringify(this.session)} ${problem}`,
      });
      // The SDKs skip what does not decode; a value that does is handed to the runner, so it is the last item now.
      if (decoded?.ok) this.tip = null;
      return;
    }
    const value = (decoded as { value: Record<string, unknown> }).value;
    if (messageTypeOf(value) === 'user') this.turn++;
    const { type, call_id: callId, name } = value;
    this.tip =
      typeof type === 'string' && type in OUTPUT_TYPE_OF && typeof callId === 'string'
        ? { ref: entry.ref, turn: this.turn, callType: type, callId, name: typeof name === 'string' ? name : null }
        : null;
  }

  /** The session's last item, when it is a function or custom tool call (whether its output exists is asked apart). */
  lastCall(): TipCall | null {
    return this.tip;
  }

  /** The finding for a tip call that has no output in the session. */
  danglingFinding(call: TipCall): Finding {
    return {
      kind: 'dangling-tool-call',
      session: this.session,
      branch: SERVER_BRANCH,
      turn: call.turn,
      rows: { [this.rowsKey]: [call.ref] },
      detail: `session ${JSON.stringify(this.session)} ends in ${call.callType}${call.name === null ? '' : ` ${call.name}`} (call_id ${call.callId}) with no output`,
    };
  }
}

/** A NULL `message_data`: Python's `json.loads(None)` raises `TypeError`, which its `get_items` does not catch. */
const NULL_PROBLEM = 'has a NULL message_data, no text at all: PostgresSession skips it, Python’s get_items fails on it (TypeError)';

/** Whether an entry's text is the output of `call` (the output type its call type takes, the same `call_id`). */
export function isOutputOf(text: string | null, call: Pick<TipCall, 'callType' | 'callId'>): boolean {
  if (text === null) return false;
  const d = pythonJsonLoads(text);
  if (!d.ok || typeof d.value !== 'object' || d.value === null) return false;
  const v = d.value as { type?: unknown; call_id?: unknown };
  return v.type === OUTPUT_TYPE_OF[call.callType] && v.call_id === call.callId;
}

/**
 * Text every JSON encoding of `callId` contains as it is, or null when an encoder may escape some of its characters
 * (then every entry of the session is decoded instead). Letters, digits and `_.:-` are never escaped by Python's
 * `json.dumps`, `JSON.stringify` or any other encoder we know of; `/`, quotes, backslashes and non-ASCII may be.
 */
export function literalCallId(callId: string): string | null {
  return /^[A-Za-z0-9_.:-]+$/.test(callId) ? callId : null;
}
