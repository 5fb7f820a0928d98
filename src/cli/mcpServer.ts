/**
 * The MCP server of `agent-sessions mcp`: the query surface's tools (src/store/query/queryTools.ts, defined once) on
 * the official MCP TypeScript SDK's `McpServer`, and each session as a resource (`agent-sessions://{store}/{session}`).
 * Read-only: no tool writes, every store is opened read-only. A call's `extra.signal` (the client's
 * `notifications/cancelled`) goes down to the query, which stops between two reads.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { QueryError } from '../store/query/queryErrors';
import { sessionUri } from '../store/query/queryAnswer';
import { sessionOverview } from '../store/query/sessionOverview';
import { QUERY_TOOLS, type QueryTool, type QueryToolHost, type ToolParameter } from '../store/query/queryTools';
import type { StoreSet } from '../store/query/storeSet';
import type { TraceStore } from '../store/traces/traceStore';
import { counted } from '../shared/countNoun';

/** Resources listed at most (a store of 100,000 sessions is read through the tools, not listed whole). */
const MAX_LISTED_RESOURCES = 500;

const INSTRUCTIONS = `Read-only access to OpenAI Agents SDK session stores (the conversations an agent kept: SQLite session files, PostgreSQL, Redis). Start with list_stores and list_sessions; read a conversation with branch_tree and read_turns; find items with search_sessions (tool:NAME, is:failed, role:user, text); compare a retry with the original with compare_branches; token_usage for tokens and cost; turn_timeline for where a turn's time went (when a trace store is open); turn_context for what the model saw in a turn (each request's input with tokens, what fell outside the window). Every answer starts with a Source line to cite, and says how to continue when it was cut.`;

/**
 * A parameter as zod (the major the repository and the SDK both use, v4), every failure with one message written
 * for a model: what the argument takes, and a call that works.
 */
function zodOf(tool: QueryTool, name: string, p: ToolParameter): z.ZodType {
  const range =
    p.type === 'string'
      ? 'a string'
      : p.minimum !== undefined && p.maximum !== undefined
        ? `a whole number from ${p.minimum} to ${p.maximum}`
        : p.minimum !== undefined
          ? `a whole number, ${p.minimum} or more`
          : 'a whole number';
  const sample =
    p.type === 'integer' ? (p.minimum ?? 0) + 1 : name === 'session' ? 'my-session' : name === 'query' ? 'tool:get_weather' : 'main';
  const example = `${tool.name} ${JSON.stringify({ ...requiredSample(tool), [name]: sample })}`;
  const error = `${name} must be ${range}${p.required ? ' (required)' : ''}. Example: ${example}`;
  let schema: z.ZodType;
  if (p.type === 'integer') {
    let n = z.number({ error }).int({ error });
    if (p.minimum !== undefined) n = n.min(p.minimum, { error });
    if (p.maximum !== undefined) n = n.max(p.maximum, { error });
    schema = n;
  } else schema = z.string({ error });
  schema = schema.describe(p.description);
  return p.required ? schema : schema.optional();
}

/** The required arguments of a tool with sample values, for examples. */
function requiredSample(tool: QueryTool): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(tool.parameters)) {
    if (!p.required) continue;
    out[name] =
      p.type === 'integer'
        ? 1
        : name === 'session'
          ? 'my-session'
          : name === 'query'
            ? 'tool:get_weather'
            : name === 'otherBranch'
              ? 'retry'
              : 'main';
  }
  return out;
}

export interface McpServerOptions {
  stores: StoreSet;
  traces?: TraceStore;
  version: string;
}

/** The server, its tools and resources registered; connect it to a transport. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const { stores } = options;
  const server = new McpServer(
    { name: 'agent-sessions', title: 'Agent Session Inspector', version: options.version },
    { capabilities: { logging: {} }, instructions: INSTRUCTIONS },
  );
  const host: QueryToolHost = {
    store: (arg, tool) => stores.resolve(arg, tool),
    stores: () => stores.list(),
    takesOtherFiles: stores.takesOtherFiles,
    ...(options.traces ? { traces: options.traces } : {}),
  };
  for (const tool of QUERY_TOOLS) {
    const shape = Object.fromEntries(Object.entries(tool.parameters).map(([name, p]) => [name, zodOf(tool, name, p)]));
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: shape,
        annotations: { title: tool.title, readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      },
      async (args: Record<string, unknown>, extra) => {
        const started = performance.now();
        try {
          const result = await tool.run(host, args, extra.signal);
          return { content: [{ type: 'text' as const, text: result.text }] };
        } catch (err) {
          if (err instanceof QueryError && err.problem === 'cancelled') {
            // No answer goes back for a cancelled request; the log says the work stopped, and when.
            void server
              .sendLoggingMessage({
                level: 'info',
                logger: 'agent-sessions',
                data: `${tool.name} cancelled: stopped after ${Math.round(performance.now() - started)} ms`,
              })
              .catch(() => undefined);
          }
          const text =
            err instanceof QueryError ? `${err.message}` : `${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`;
          return { content: [{ type: 'text' as const, text }], isError: true };
        }
      },
    );
  }
  server.registerResource(
    'session',
    new ResourceTemplate('agent-sessions://{store}/{session}', {
      list: async (extra) => {
        const resources: { uri: string; name: string; title: string; description: string; mimeType: string }[] = [];
        for (const s of stores.list()) {
          if (resources.length >= MAX_LISTED_RESOURCES) break;
          let sessions;
          try {
            sessions = await (await stores.resolve(s.name, 'list_sessions')).listSessions(extra.signal);
          } catch {
            // A store that cannot be opened lists nothing; its tools say why.
            continue;
          }
          for (const session of sessions.slice(0, MAX_LISTED_RESOURCES - resources.length)) {
            resources.push({
              uri: sessionUri(s.name, session.sessionId),
              name: `${s.name}/${session.sessionId}`,
              title: `${session.sessionId} (${s.name})`,
              description: `${counted(session.messageCount, 'item')}, ${counted(session.branchCount, 'branch', 'branches')}, updated ${session.updatedAt ?? 'unknown'}`,
              mimeType: 'text/markdown',
            });
          }
        }
        return { resources };
      },
    }),
    {
      title: 'Agent session',
      description: "A session's branch tree and its first turns as Markdown (read_turns reads the rest).",
      mimeType: 'text/markdown',
    },
    async (uri, variables, extra) => {
      const one = (v: string | string[] | undefined) => decodeURIComponent(Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
      const storeName = one(variables.store);
      const store = await stores.byName(storeName);
      if (!store)
        throw new QueryError(
          'unknown-store',
          `No store "${storeName}": stores are ${
            stores
              .list()
              .map((s) => s.name)
              .join(', ') || '(none)'
          }.`,
        );
      const text = await sessionOverview(store, one(variables.session), extra.signal);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
    },
  );
  return server;
}
