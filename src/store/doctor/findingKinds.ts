/**
 * The kinds of damage the doctor looks for in a session file (docs/doctor.md has a section per kind): what each
 * breaks for the user, the upstream issue, the SDK release that stopped writing it, and what `--fix` does about it.
 * Kinds with `repair: null` are reported only: no repair could be made without guessing which rows the user wants.
 */

export type FindingKind =
  'integrity-check' | 'turn-zero-usage' | 'orphan-usage' | 'orphan-messages' | 'dangling-tool-call' | 'empty-main' | 'blank-branch-id';

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
  'dangling-tool-call': {
    title: 'branch ends in a tool call without its output',
    breaks: 'The next run on the branch sends the call without an output and the model API refuses the request.',
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
};

/** The order kinds are checked and listed in. */
export const KIND_ORDER: readonly FindingKind[] = Object.keys(FINDING_KINDS) as FindingKind[];

/** The text of the output item the doctor adds after a dangling call. */
export const ADDED_OUTPUT_TEXT = '[added by agent-sessions doctor: the run ended before this tool returned]';
