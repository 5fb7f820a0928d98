/**
 * The one `RunAgentInput` an agent command receives (docs/agent-command.md §2): AG-UI's own fields, and our session
 * coordinates in `forwardedProps.agentSessions`. Validated with `@ag-ui/core`'s schema before it is sent, so a
 * command never gets input its AG-UI library would reject.
 */
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
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
  RunAgentInputSchema.parse(value);
  return value;
}
