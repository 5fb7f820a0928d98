/**
 * The MCP server of `agent-sessions mcp`: the query surface's tools (src/store/query/queryTools.ts, defined once) on
 * the official MCP TypeScript SDK's `McpServer`, and each session as a resource (`agent-sessions://{store}/{session}`).
 * Read-only: no tool writes, every store is opened read-only. A call's `extra.signal` (the client's
 * `notifications/cancelled`) goes down to the query, which stops between two reads.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, ReadResourceRequestSchema, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { QueryError, someOf, toolErrorText } from '../store/query/queryErrors';
import { sessionUri } from '../store/query/queryAnswer';
import { sessionOverview } from '../store/query/sessionOverview';
import { QUERY_TOOLS, type QueryTool, type QueryToolHost } from '../store/query/queryTools';
import type { StoreSet } from '../store/query/storeSet';
import type { TraceStore } from '../store/traces/traceStore';
import { counted } from '../shared/countNoun';

/** Resources listed at most (a store of 100,000 sessions is read through the tools, not listed whole). */
const MAX_LISTED_RESOURCES = 500;

const INSTRUCTIONS = `Read-only access to OpenAI Agents SDK session stores (the conversations an agent kept: SQLite session files, PostgreSQL, Redis). Start with list_stores and list_sessions; read a conversation with branch_tree and read_turns; find items with search_sessions (tool:NAME, is:failed, role:user, text); compare a retry with the original with compare_branches; token_usage for tokens and cost; turn_timeline for where a turn's time went (when a trace store is open); turn_context for what the model saw in a turn (each request's input with tokens, what fell outside the window). Every answer starts with a Source line to cite, and says how to continue when it was cut.`;

/**
 * A tool's parameters as zod (the major the repository and the SDK both use, v4) for the SDK: the JSON Schema the
 * client lists says each parameter's type, range and whether it is required (`meta`, which zod writes into the
 * schema as is), but the SDK lets any value through to the tool. The query checks every argument itself, knowing the
 * store, so its error ends with a call that works there (src/store/query/queryExamples.ts); the SDK's own check could
 * only show a template with made-up values, which fails again when the model copies it.
 */
function zodOf(tool: QueryTool): z.ZodType<Record<string, unknown>> {
  const shape: Record<string, z.ZodType> = {};
  const required: string[] = [];
  for (const [name, p] of Object.entries(tool.parameters)) {
    const type = {
      type: p.type,
      ...(p.minimum !== undefined ? { minimum: p.minimum } : {}),
      ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
    };
    shape[name] = z.unknown().meta(type).describe(p.description).optional();
    if (p.required) required.push(name);
  }
  const object = z.object(shape);
  return required.length > 0 ? object.meta({ required }) : object;
}

/** MCP's error code for a resource that does not exist (the specification's "Resource not found"; the SDK names none). */
const RESOURCE_NOT_FOUND = -32002;

/** A session's resource URI, `agent-sessions://{store}/{session}`, both parts percent-encoded. */
const SESSION_URI = /^agent-sessions:\/\/([^/?#]+)\/([^/?#]+)$/;

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
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: zodOf(tool),
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
          return { content: [{ type: 'text' as const, text: toolErrorText(tool.name, err) }], isError: true };
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
    async (uri, _variables, extra) => readSession(uri.href, extra.signal),
  );
  // McpServer's own handler parses the URI before any callback runs, so a URI that does not parse would come back as
  // an internal error (-32603); this one answers every read itself (the template above is the only resource).
  server.server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => readSession(request.params.uri, extra.signal));
  /**
   * A session's overview. A URI that is not a session's is invalid params (-32602); a store or session that does not
   * exist is MCP's resource not found (-32002), with the URI as its data, as the specification asks.
   */
  async function readSession(uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
    const m = SESSION_URI.exec(uri);
    let parts: [string, string] | undefined;
    try {
      if (m) parts = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
    } catch {
      // A malformed percent-encoding: the URI is not one this server gave.
    }
    if (!parts)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Not a session URI: ${JSON.stringify(uri)}. A session is agent-sessions://{store}/{session}, both parts percent-encoded (resources/list gives them).`,
      );
    const [storeName, sessionId] = parts;
    const notFound = (message: string) => new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${message}`, { uri });
    const store = await stores.byName(storeName).catch((err: unknown) => {
      throw err instanceof QueryError && err.problem === 'unknown-store' ? notFound(err.message) : err;
    });
    if (!store)
      throw notFound(
        `no store "${storeName}": stores are ${someOf(
          stores.list().map((s) => s.name),
          10,
        )}.`,
      );
    try {
      const text = await sessionOverview(store, sessionId, signal);
      return { contents: [{ uri, mimeType: 'text/markdown', text }] };
    } catch (err) {
      if (err instanceof QueryError && (err.problem === 'unknown-session' || err.problem === 'unknown-branch')) throw notFound(err.message);
      throw err;
    }
  }
  // The served set grows when a call names a file that opens: the client is told, as the listChanged it was promised
  // (the SDK declares resources.listChanged for every server with resources) says it will be.
  stores.onChange = () => {
    if (server.isConnected()) void server.server.sendResourceListChanged().catch(() => undefined);
  };
  return server;
}
