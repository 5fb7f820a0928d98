/**
 * The one `RunAgentInput` an agent command receives (docs/agent-command.md §2): AG-UI's own fields, and our session
 * coordinates in `forwardedProps.agentSessions`. Checked before it is sent, so a command never gets input its AG-UI
 * library would reject: by hand, for the fields `@ag-ui/core`'s `RunAgentInputSchema` constrains, since loading that
 * schema (zod and all of AG-UI's) was most of `agent-sessions run`'s time before the agent started (issue 43). A unit
 * test holds the check to the schema on the inputs we build and on broken ones (commandInput.test.ts).
 */
import type { TableNames } from '../../store';
import type { ReplayTable, ToolsMode } from '../../shared/protocol/replay';
import { runInputText } from '../runReporter';

/**
 * The version of `forwardedProps.agentSessions`; a command can refuse versions it does not know. Version 2 added
 * `tools` (the replay of recorded tool results); a version-1 agent ignores it and runs its tools live.
 */
export const COORDINATES_VERSION = 2;
/** The AG-UI protocol version we speak. */
export const AG_UI_PROTOCOL_VERSION = '1.0';

export interface CommandInputArgs {
  runId: string;
  dbPath: string;
  tables: TableNames;
  sessionId: string;
  /** The branch to append to. */
  branchId: string;
  /** Set when the command makes the branch (a fork at turn 1: nothing to copy, nothing to switch to). */
  fork: { fromBranchId: string; fromTurn: number } | null;
  model: string | null;
  /** The user's message: text, or items in the SDK's shape. */
  input: string | readonly unknown[];
  /** What the agent does with its tool calls, and the recorded calls it replays (an empty table past the recording). */
  tools: { mode: ToolsMode; nameOnly: readonly string[]; table: ReplayTable };
}

/** `forwardedProps.agentSessions.tools` (docs/agent-command.md §2): the mode and the replay table, as plain JSON. */
function toolsField(tools: CommandInputArgs['tools']): Record<string, unknown> {
  return {
    mode: tools.mode,
    nameOnly: [...tools.nameOnly],
    recorded: tools.table.calls.map((c) => ({
      callId: c.callId,
      name: c.name,
      arguments: c.arguments,
      output: c.output,
      hasOutput: c.hasOutput,
      turn: c.turn,
      branchId: c.branchId,
    })),
    hosted: tools.table.hosted.map((h) => ({ type: h.type, callId: h.callId })),
  };
}

export function buildCommandInput(args: CommandInputArgs): Record<string, unknown> {
  const items = typeof args.input === 'string' ? [{ role: 'user', content: args.input }] : args.input;
  const value = {
    threadId: args.sessionId,
    runId: args.runId,
    protocolVersion: AG_UI_PROTOCOL_VERSION,
    state: {},
    messages: [{ id: `${args.runId}-user`, role: 'user', content: runInputText(args.input) }],
    tools: [],
    context: [],
    forwardedProps: {
      agentSessions: {
        version: COORDINATES_VERSION,
        store: { kind: 'sqlite', path: args.dbPath, sessionsTable: args.tables.sessions, messagesTable: args.tables.messages },
        sessionId: args.sessionId,
        branchId: args.branchId,
        fork: args.fork,
        model: args.model,
        input: items,
        tools: toolsField(args.tools),
      },
    },
  };
  // Our own mistake if it fails: better found here than by every user's AG-UI library.
  checkRunAgentInput(value);
  return value;
}

/** Thrown by `checkRunAgentInput`: the input we built is not one AG-UI's schema accepts (a bug of ours). */
export class RunAgentInputError extends Error {
  constructor(readonly field: string) {
    super(`The agent's input is not a valid AG-UI RunAgentInput: ${field}.`);
    this.name = 'RunAgentInputError';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What `RunAgentInputSchema` (@ag-ui/core 1.x) requires of the fields we send: `threadId` and `runId` strings,
 * `protocolVersion` a string if present, `messages` a list, `forwardedProps` anything but null. Stricter where we send
 * one kind only: each message a user message with text (`id` and `content` strings), `tools` and `context` empty
 * lists. Other keys pass, as the schema's loose objects let them.
 */
export function checkRunAgentInput(value: unknown): void {
  if (!isRecord(value)) throw new RunAgentInputError('not an object');
  if (typeof value.threadId !== 'string') throw new RunAgentInputError('threadId is not a string');
  if (typeof value.runId !== 'string') throw new RunAgentInputError('runId is not a string');
  if (value.protocolVersion !== undefined && typeof value.protocolVersion !== 'string')
    throw new RunAgentInputError('protocolVersion is not a string');
  if (!Array.isArray(value.messages)) throw new RunAgentInputError('messages is not a list');
  value.messages.forEach((m: unknown, i) => {
    if (!isRecord(m) || m.role !== 'user') throw new RunAgentInputError(`messages[${i}] is not a user message`);
    if (typeof m.id !== 'string') throw new RunAgentInputError(`messages[${i}].id is not a string`);
    if (typeof m.content !== 'string') throw new RunAgentInputError(`messages[${i}].content is not a string`);
  });
  for (const key of ['tools', 'context'] as const) {
    if (value[key] === undefined) continue;
    if (!Array.isArray(value[key])) throw new RunAgentInputError(`${key} is not a list`);
    if (value[key].length > 0) throw new RunAgentInputError(`${key} is not empty (we send none)`);
  }
  if (value.forwardedProps === null) throw new RunAgentInputError('forwardedProps is null');
}
