/**
 * The kinds of damage the doctor looks for in a session file (docs/doctor.md has a section per kind): what each
 * breaks for the user, the upstream issue, the SDK release that stopped writing it, and what `--fix` does about it.
 * Kinds with `repair: null` are reported only: no repair could be made without guessing which rows the user wants.
 */

export type FindingKind =
  | 'integrity-check'
  | 'stale-wal'
  | 'altered-schema'
  | 'turn-zero-usage'
  | 'orphan-usage'
  | 'orphan-messages'
  | 'shared-message-structure'
  | 'dangling-tool-call'
  | 'empty-main'
  | 'blank-branch-id'
  | 'malformed-item'
  | 'messages-without-session'
  | 'wrong-key-type';

export interface KindInfo {
  /** One line for people. */
  readonly title: string;
  /** Which reads or runs go wrong. */
  readonly breaks: string;
  /** The upstream issue or pull request, or null for damage any SQLite file can suffer. */
  readonly upstream: string | null;
  /** The SDK release that stopped writing it, or why none did. */
  readonly fixedIn: string;
  /** What `--fix` does, or null when the kind is reported only. */
  readonly repair: string | null;
}

const PY = 'https://github.com/openai/openai-agents-python';

export const FINDING_KINDS: Readonly<Record<FindingKind, KindInfo>> = {
  'integrity-check': {
    title: 'SQLite integrity_check failed',
    breaks: 'Any read may fail or return damaged rows; a write may spread the damage.',
    upstream: null,
    fixedIn: 'not an SDK bug (disk, copy of a live file, killed writer)',
    repair: null,
  },
  'stale-wal': {
    title: 'the -wal holds committed transactions the main file does not hold yet',
    breaks:
      'The main file alone is missing the last transactions: a copy, backup or sync of the .db without its -wal loses them, ' +
      'and a tool given the main file alone shows older content.',
    upstream: null,
    fixedIn: 'not an SDK bug (a writer that stopped before its last checkpoint, or one still writing)',
    repair:
      'Checkpoints through SQLite after the repairs commit (PRAGMA wal_checkpoint(FULL), then TRUNCATE): the frames go into the ' +
      'main file and the -wal is emptied; never a file copy.',
  },
  'altered-schema': {
    title: "a session table's schema differs from the one the SDKs create",
    breaks:
      'Depends on the change (each finding says): a dropped index makes reads scan whole tables; a changed type, default or ' +
      'constraint stores other values than the SDKs wrote or makes their writes fail; a trigger rewrites what they write.',
    upstream: null,
    fixedIn: 'not an SDK bug (the file was changed by hand or by another program)',
    repair:
      'Recreates a missing index with the exact statement the SDKs run. Every other change is reported only: undoing it ' +
      'means rebuilding the table or dropping what someone added on purpose.',
  },
  'turn-zero-usage': {
    title: 'usage row for turn 0 on a branch with no turn',
    breaks: 'Session and branch token totals count a run no turn shows; no delete_branch ever removes the row.',
    upstream: `${PY}/issues/4821 (fixed by ${PY}/pull/4822)`,
    fixedIn: 'openai-agents-python after 0.22.0 (PR #4822)',
    repair: 'Deletes the usage row (totals drop by its tokens; the backup keeps it). No message is touched.',
  },
  'orphan-usage': {
    title: 'usage row for a turn with no structure rows',
    breaks: 'Token totals count a turn that no branch shows; per-turn usage tables list a turn that cannot be opened.',
    upstream: `${PY}/issues/3755`,
    fixedIn: 'not fixed upstream as of 0.22.0',
    repair: 'Deletes the usage row (totals drop by its tokens; the backup keeps it). No message is touched.',
  },
  'orphan-messages': {
    title: 'messages no branch references',
    breaks: 'The rows take space forever and come back in a plain SQLiteSession read of the same session id.',
    upstream: `${PY}/issues/3346 (fixed by ${PY}/pull/3347)`,
    fixedIn: 'the release carrying PR #3347 (0.22.0 removes orphans on delete_branch; which release first did is not verified from source)',
    repair: 'Deletes the messages: no structure row references them, so no branch can show them.',
  },
  'shared-message-structure': {
    title: 'message_structure rows of another sessions/messages table pair in the file',
    breaks:
      "Python ≤ 0.21.0 joins message_structure on the message id alone, so each store's reads show the other's rows as " +
      'duplicates of its own messages, turn numbers and usage run on across both stores, and rows pointing at the other ' +
      "store's messages are turns no read of this store can open.",
    upstream: `${PY}/pull/4454 (reports: ${PY}/pull/4441, ${PY}/pull/4902)`,
    fixedIn: 'openai-agents-python 0.21.1 (PR #4454 refuses a second table pair in one file)',
    repair: null,
  },
  'dangling-tool-call': {
    title: 'branch ends in a tool call without its output',
    breaks:
      "Both SDKs' runners (openai-agents-python since 0.8.0, @openai/agents) drop a call without its output from every later " +
      'request: the model never sees that it asked for the tool, may ask again, and the branch shows a call the model ' +
      'did not get. A client that sends the stored items as they are (an older SDK, a raw Responses request) is refused by the API.',
    upstream: null,
    fixedIn: 'not fixed upstream as of 0.22.0 (a run that stops between the call and its output leaves it)',
    repair:
      'Adds an output item after the call, on that branch only, saying it was added by the doctor: ' +
      '{"type": "function_call_output", "call_id": …, "output": "[added by agent-sessions doctor: the run ended before this tool returned]"}.',
  },
  'empty-main': {
    title: "session's main branch is empty while other branches hold its turns",
    breaks: 'Every new session instance starts on main and sees an empty conversation.',
    upstream: `${PY}/pull/5081`,
    fixedIn: 'openai-agents-python after 0.22.0 (PR #5081)',
    repair: null,
  },
  'blank-branch-id': {
    title: 'blank or whitespace branch id',
    breaks: 'delete_branch trims its argument, so the branch cannot be deleted or told apart by name.',
    upstream: `${PY}/pull/5007`,
    fixedIn: 'not fixed upstream (PR #5007 closed unmerged)',
    repair: null,
  },
  // Found in session files and server stores alike.
  'malformed-item': {
    title: 'stored entry that is not an item (not UTF-8, not JSON, or not a JSON object)',
    breaks:
      "The SDKs' get_items skips an entry that does not decode, so the conversation silently lacks it, and pop_item drops " +
      'it; a JSON value that is not an object is handed to the runner as an input item, and the run fails on it.',
    upstream: null,
    fixedIn: 'not an SDK bug (written by another program or by hand: the SDKs write JSON objects)',
    repair: null,
  },
  // The kinds below are the server stores' (PostgreSQL, Redis: docs/doctor.md, "Server stores"), checked read-only.
  'messages-without-session': {
    title: 'stored items with no session record',
    breaks:
      'Session lists (the sessions table, the Redis session hashes) do not show the session, while get_items still ' +
      'returns its items to any agent that knows its id.',
    upstream: null,
    fixedIn:
      'not an SDK bug (PostgreSQL: a schema from migrations without the foreign key, then the session row deleted; ' +
      'Redis: the session hash deleted or expired apart from its list)',
    repair: null,
  },
  'wrong-key-type': {
    title: 'a Redis session key holds another type than RedisSession writes',
    breaks:
      'Every add_items on the session is refused (WRONGTYPE) and nothing is written; when the messages key is not a ' +
      'list, every get_items fails too.',
    upstream: null,
    fixedIn:
      'not an SDK bug (another program or a hand edit wrote the key; RedisSession 0.22.0 refuses to write a session ' +
      'whose keys hold other types, and since the ids a and a:messages claim the same key, only the first is written)',
    repair: null,
  },
};

/** The order kinds are checked and listed in. */
export const KIND_ORDER: readonly FindingKind[] = Object.keys(FINDING_KINDS) as FindingKind[];

/** The text of the output item the doctor adds after a dangling call. */
export const ADDED_OUTPUT_TEXT = '[added by agent-sessions doctor: the run ended before this tool returned]';
