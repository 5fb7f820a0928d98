/**
 * The query surface as tools, defined once: each tool's name, its description and parameters written for a model,
 * and the query it runs. The MCP server (src/cli/mcpServer.ts) and the VS Code Language Model tools register
 * these; `toolInputSchema` gives a tool's parameters as the JSON Schema both protocols take.
 */
import type { TurnSpanSource } from './turnTimeline';
import { compareBranches } from './branchComparison';
import { answer, type QueryAnswer } from './queryAnswer';
import { applyFix, exampleCall, withExample } from './queryExamples';
import { QueryError, checkCancelled } from './queryErrors';
import {
  DEFAULT_MAX_CHARS,
  DEFAULT_MAX_HITS,
  DEFAULT_MAX_ROWS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SPANS,
  DEFAULT_MAX_TURNS,
  MAX_MAX_CHARS,
  MAX_MAX_HITS,
  MAX_MAX_ROWS,
  MAX_MAX_SESSIONS,
  MAX_MAX_SPANS,
  MAX_MAX_TURNS,
} from './queryLimits';
import type { QueryStore } from './queryStore';
import { searchSessions } from './searchQueries';
import { branchTree, listSessions } from './sessionQueries';
import { turnTimeline } from './turnTimeline';
import { turnContext } from './turnContextQuery';
import { readTurns } from './turnQueries';
import { tokenUsage } from './usageQueries';
import { counted } from '../../shared/countNoun';

/** One parameter of a tool: a string or a whole number. */
export interface ToolParameter {
  type: 'string' | 'integer';
  description: string;
  required?: boolean;
  minimum?: number;
  maximum?: number;
}

/** What the tools run against: the stores served and, when there is one, a trace store. */
export interface QueryToolHost {
  /** The store the `store` argument names (see StoreSet.resolve). */
  store(arg: unknown, tool: string): Promise<QueryStore>;
  /** The stores there are, for `list_stores`. */
  stores(): { name: string; location: string; kind: 'file' | 'server' }[];
  /** False when a call may name only the stores listed (`agent-sessions mcp --only-stores`); default true. */
  takesOtherFiles?: boolean;
  traces?: TurnSpanSource;
}

export interface QueryTool {
  name: string;
  /** A short title for people (tool pickers). */
  title: string;
  /** What it does and when to use it, for a model. */
  description: string;
  parameters: Record<string, ToolParameter>;
  run(host: QueryToolHost, args: Record<string, unknown>, signal: AbortSignal): Promise<QueryAnswer>;
}

const STORE: ToolParameter = {
  type: 'string',
  description: 'Which store: a name from list_stores, or the path of a SQLite session file. May be left out when only one store is served.',
};
const SESSION: ToolParameter = { type: 'string', description: 'The session id (from list_sessions).', required: true };
const BRANCH: ToolParameter = { type: 'string', description: 'The branch id (from branch_tree); default "main", else the first branch.' };
const MAX_CHARS: ToolParameter = {
  type: 'integer',
  description: `Most characters of the answer's body (default ${DEFAULT_MAX_CHARS}).`,
  minimum: 200,
  maximum: MAX_MAX_CHARS,
};
const int = (description: string, minimum: number, maximum?: number): ToolParameter => ({
  type: 'integer',
  description,
  minimum,
  ...(maximum !== undefined ? { maximum } : {}),
});

const READ_ONLY_NOTE = 'Read-only.';

/** The tools as defined: their errors name what was wrong; `QUERY_TOOLS` adds the call that works (queryExamples.ts). */
const DEFINED_TOOLS: readonly QueryTool[] = [
  {
    name: 'list_stores',
    title: 'List session stores',
    description: `Lists the session stores that can be read here (OpenAI Agents SDK session databases: SQLite files, PostgreSQL, Redis), with the name to pass as "store". Start here when you do not know the store's name. ${READ_ONLY_NOTE}`,
    parameters: {},
    async run(host) {
      const list = host.stores();
      // Paths quoted whole (a call may pass one back as "store"): a line break in a file's name cannot add a store.
      const lines = list.map(
        (s) => `- ${JSON.stringify(s.name)}: ${s.kind === 'file' ? 'SQLite session file' : 'server store'} ${JSON.stringify(s.location)}`,
      );
      const others = host.takesOtherFiles !== false;
      const body =
        list.length === 0
          ? others
            ? 'No stores are served. Pass "store" as the path of a SQLite session file to any tool.'
            : 'No stores are served, and this server reads no other file: the user opens a session file in VS Code for it to be served.'
          : `${counted(list.length, 'store')}:\n${lines.join('\n')}\n${
              others
                ? 'Any tool also takes "store" as the path of another SQLite session file.'
                : 'Only these stores are read here: the user opens another session file in VS Code for it to be served.'
            }`;
      return answer(
        { store: '(all)', location: 'here' },
        `${body}${host.traces ? `\nTrace store: ${JSON.stringify(host.traces.path)}` : ''}`,
        null,
      );
    },
  },
  {
    name: 'list_sessions',
    title: 'List sessions',
    description: `Lists the sessions (conversations) of a store with their item, turn and branch counts, tokens and last update. ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      contains: { type: 'string', description: 'Only sessions whose id contains this text (case-insensitive).' },
      offset: int('Sessions to skip: the offset an earlier, truncated answer gave.', 0),
      maxSessions: int(`Most sessions to list (default ${DEFAULT_MAX_SESSIONS}).`, 1, MAX_MAX_SESSIONS),
    },
    run: async (host, args, signal) => listSessions(await host.store(args.store, 'list_sessions'), args, signal),
  },
  {
    name: 'branch_tree',
    title: 'Show branch tree',
    description: `Shows a session's branches as a tree: each branch's turns and items, and the branch and turn it was forked from (turns before the fork are shared with the parent). ${READ_ONLY_NOTE}`,
    parameters: { store: STORE, session: SESSION },
    run: async (host, args, signal) => branchTree(await host.store(args.store, 'branch_tree'), args as { session: string }, signal),
  },
  {
    name: 'read_turns',
    title: 'Read turns',
    description: `Reads turns of a session's branch as Markdown: each user message, the assistant's messages, and every tool call with its arguments and output. A turn starts at a user message. Give "turn" for one turn (0 = the items before the first user message, such as instructions), or "afterTurn" to read the turns after it (default: from turn 1). Long answers are cut; the last line says how to continue (afterTurn, or turn with charOffset). ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      session: SESSION,
      branch: BRANCH,
      turn: int('One turn to read (1 = the first user message; 0 = before it).', 0),
      afterTurn: int('Read the turns after this turn number (default 0: from the first).', 0),
      maxTurns: int(`Most turns to read (default ${DEFAULT_MAX_TURNS}).`, 1, MAX_MAX_TURNS),
      maxChars: MAX_CHARS,
      charOffset: int('With "turn": skip this many characters of the turn (to continue a cut turn).', 0),
    },
    run: async (host, args, signal) => readTurns(await host.store(args.store, 'read_turns'), args as { session: string }, signal),
  },
  {
    name: 'search_sessions',
    title: 'Search sessions',
    description: `Searches every session and branch of a store (or one session) for items. Query syntax: free text (a case-insensitive substring of messages, tool arguments and outputs), "quoted text", tool:NAME (a tool's calls and outputs), is:failed (failed tool calls), role:user|assistant|system|developer; every part must hold, e.g. 'tool:refund is:failed' or 'role:user "max turns"'. The review filters of the extension's search box (is:good, is:bad, tag:, reviewed:) are not available here: they are refused, as this tool reads no review store. Each hit names its session, branch and turn (read it with read_turns). ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      query: { type: 'string', description: 'The search query (see the syntax above).', required: true },
      session: { type: 'string', description: 'Only this session (default: every session).' },
      afterHit: int('Hits to skip: the afterHit an earlier, truncated answer gave.', 0),
      maxHits: int(`Most hits to return (default ${DEFAULT_MAX_HITS}).`, 1, MAX_MAX_HITS),
      maxChars: MAX_CHARS,
    },
    run: async (host, args, signal) => searchSessions(await host.store(args.store, 'search_sessions'), args as { query: string }, signal),
  },
  {
    name: 'token_usage',
    title: 'Show token usage',
    description: `Token usage of a session: per branch with the session's total, or (with "branch") per turn. Each branch's figures count its whole conversation, shared turns included. Pass "model" (e.g. gpt-4.1) to add the cost at the built-in price table; files record no model. PostgreSQL and Redis stores keep no usage. ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      session: SESSION,
      branch: { type: 'string', description: 'Per-turn rows of this branch (default: totals per branch).' },
      model: { type: 'string', description: 'Price the tokens as this model (a name in the built-in price table).' },
      offset: int('Rows to skip: the offset an earlier, truncated answer gave.', 0),
      maxRows: int(`Most turn rows (default ${DEFAULT_MAX_ROWS}).`, 1, MAX_MAX_ROWS),
    },
    run: async (host, args, signal) => tokenUsage(await host.store(args.store, 'token_usage'), args as { session: string }, signal),
  },
  {
    name: 'compare_branches',
    title: 'Compare branches',
    description: `Compares two branches of a session turn by turn from where they stop sharing turns (as the compare view does): user and assistant text diffed word by word ([-only in branch-] {+only in otherBranch+}), tool calls matched by name with changed arguments and outputs, tokens. Use it to see what a retry or a what-if changed. ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      session: SESSION,
      branch: { type: 'string', description: 'The baseline branch (e.g. "main").', required: true },
      otherBranch: { type: 'string', description: 'The branch to compare with the baseline.', required: true },
      afterTurn: int('Compare the turns after this one (default: from the first unshared turn).', 0),
      maxTurns: int(`Most turns to compare (default ${DEFAULT_MAX_TURNS}).`, 1, MAX_MAX_TURNS),
      maxChars: MAX_CHARS,
    },
    run: async (host, args, signal) =>
      compareBranches(
        await host.store(args.store, 'compare_branches'),
        args as { session: string; branch: string; otherBranch: string },
        signal,
      ),
  },
  {
    name: 'turn_timeline',
    title: 'Show turn timeline',
    description: `A turn's timeline from the trace store: its spans (agent runs, model requests with model and tokens, tool calls, handoffs, errors) as an indented waterfall with start offsets and durations. Use it to see where a turn's time went or which call failed. Needs a trace store (the MCP server's --traces; in VS Code, the extension's own). ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      session: SESSION,
      branch: BRANCH,
      turn: { ...int('The turn (1 = the first user message).', 1), required: true },
      afterSpan: int('Spans to skip: the afterSpan an earlier, truncated answer gave.', 0),
      maxSpans: int(`Most spans (default ${DEFAULT_MAX_SPANS}).`, 1, MAX_MAX_SPANS),
    },
    run: async (host, args, signal) =>
      turnTimeline(await host.store(args.store, 'turn_timeline'), host.traces, args as { session: string; turn: number }, signal),
  },
  {
    name: 'turn_context',
    title: 'Show turn context',
    description: `What the model saw in a turn: each model request's input item by item (instructions and tool definitions when recorded, messages, tool calls and outputs, reasoning, compaction items) with token counts, the share of each kind, the cached share from the usage row, and the stored items that fell outside the window and why (session limit, compaction, not sent). RECORDED when the run recorded its inputs in the trace store, else RECONSTRUCTED from the stored items (the answer says which). Use it to debug an answer that ignored or forgot something. ${READ_ONLY_NOTE}`,
    parameters: {
      store: STORE,
      session: SESSION,
      branch: BRANCH,
      turn: { ...int('The turn (1 = the first user message).', 1), required: true },
      request: int("Which model request's items to list (1 = the first; default the last, which holds the most).", 1, 1000),
      limit: int(
        "The session's limit (SessionSettings.limit) when you know it: a reconstruction then keeps only the last that many items of the history.",
        0,
      ),
      model: {
        type: 'string',
        description: "The model, to choose the tokenizer (default: the one the turn's spans name; else o200k_base, approximate).",
      },
      afterItem: int('Lines to skip: the afterItem an earlier, truncated answer gave.', 0),
      maxChars: MAX_CHARS,
    },
    run: async (host, args, signal) =>
      turnContext(await host.store(args.store, 'turn_context'), host.traces, args as { session: string; turn: number }, signal),
  },
];

/**
 * Runs `tool`; an error that carries a fix comes back with a call that works at its end, made from the caller's
 * arguments and the store the call read (or, when the store itself was wrong, the first one served).
 */
async function runWithExample(
  tool: QueryTool,
  host: QueryToolHost,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<QueryAnswer> {
  let resolved: QueryStore | undefined;
  // The store the call resolved, kept for the example: resolving it again could ask the user again (VS Code).
  const watching: QueryToolHost = {
    store: async (arg, name) => (resolved = await host.store(arg, name)),
    stores: () => host.stores(),
    ...(host.takesOtherFiles !== undefined ? { takesOtherFiles: host.takesOtherFiles } : {}),
    ...(host.traces ? { traces: host.traces } : {}),
  };
  try {
    return await tool.run(watching, args, signal);
  } catch (err) {
    if (!(err instanceof QueryError) || !err.fix || signal.aborted) throw err;
    const fixed = applyFix(args, err.fix);
    let store = resolved;
    if (err.fix.set && 'store' in err.fix.set) {
      try {
        store = await host.store(err.fix.set.store, tool.name);
      } catch {
        // That store cannot be read either: the error goes without an example rather than with one that fails.
        store = undefined;
      }
    }
    if (!store) throw new QueryError(err.problem, err.message);
    throw withExample(err, tool.name, await exampleCall(tool, host, store, fixed, signal));
  }
}

/** The tools, each run so that its errors end with a call that works. */
export const QUERY_TOOLS: readonly QueryTool[] = DEFINED_TOOLS.map((tool) => ({
  ...tool,
  run: (host: QueryToolHost, args: Record<string, unknown>, signal: AbortSignal) => runWithExample(tool, host, args, signal),
}));

/** The tool called `name`, or undefined. */
export function queryTool(name: string): QueryTool | undefined {
  return QUERY_TOOLS.find((t) => t.name === name);
}

/** A tool's parameters as a JSON Schema object (what MCP's `inputSchema` and VS Code's `inputSchema` take). */
export function toolInputSchema(tool: QueryTool): {
  type: 'object';
  properties: Record<string, { type: string; description: string; minimum?: number; maximum?: number }>;
  required: string[];
  additionalProperties: false;
} {
  const properties: Record<string, { type: string; description: string; minimum?: number; maximum?: number }> = {};
  for (const [name, p] of Object.entries(tool.parameters)) {
    properties[name] = {
      type: p.type,
      description: p.description,
      ...(p.minimum !== undefined ? { minimum: p.minimum } : {}),
      ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
    };
  }
  return {
    type: 'object',
    properties,
    required: Object.entries(tool.parameters)
      .filter(([, p]) => p.required)
      .map(([n]) => n),
    additionalProperties: false,
  };
}

/** Runs a tool by name; an unknown name is a `bad-argument` naming the tools there are. */
export async function runQueryTool(
  host: QueryToolHost,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<QueryAnswer> {
  const tool = queryTool(name);
  if (!tool)
    throw new QueryError('bad-argument', `No tool ${JSON.stringify(name)}; the tools are ${QUERY_TOOLS.map((t) => t.name).join(', ')}.`);
  checkCancelled(signal);
  return tool.run(host, args, signal);
}
