/**
 * `agent-sessions mcp`: the MCP server over stdio (mcpServer.ts). Its own arguments (`--store` may be given several
 * times, which the other commands' single --store does not allow), parsed here; the stores are opened on first use
 * and read-only, server stores with the password from $AGENT_SESSIONS_PASSWORD as every command reads them.
 * stdout carries only MCP messages; nothing else is printed there.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { fileQueryStore, serverQueryStore } from '../store/query/queryStore';
import { StoreSet, type StoreOpener } from '../store/query/storeSet';
import { markSidecars, removeSidecarsLeft } from '../store/sqlite/readerSidecars';
import { TraceStore } from '../store/traces/traceStore';
import { closeStore, isServerAddress, openStore } from './cliStore';
import { EXIT, UsageError } from './exitCodes';
import { COMMAND_HELP } from './help';
import { createMcpServer } from './mcpServer';

/**
 * Set to `client` by the servers VS Code starts (src/extension/codingAgents/mcpServerPlans.ts, which spells the same
 * name): the start-up line goes to the client as an MCP log message instead of stderr. Any other value: stderr.
 */
export const MCP_LOG_ENV = 'AGENT_SESSIONS_MCP_LOG';

const MCP_OPTIONS = {
  store: { type: 'string', multiple: true },
  db: { type: 'string', short: 'd', multiple: true },
  traces: { type: 'string' },
  'key-prefix': { type: 'string' },
  'only-stores': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the server until the client closes stdin (or SIGINT/SIGTERM); the exit code. */
export async function mcpCommand(argv: string[], version: string): Promise<number> {
  const { values: v, positionals } = parseArgs({ args: argv, options: MCP_OPTIONS, allowPositionals: true, strict: true });
  if (v.help) {
    process.stdout.write(COMMAND_HELP.mcp ?? '');
    return EXIT.ok;
  }
  // A file given without --store reads as naturally (`agent-sessions mcp conversations.db`).
  const targets = [...(v.store ?? []), ...(v.db ?? []), ...positionals];
  if (targets.length === 0 && process.env.AGENT_SESSIONS_DB) targets.push(process.env.AGENT_SESSIONS_DB);
  for (const t of targets) {
    if (!/^(postgres(ql)?|redis|rediss):\/\//i.test(t) && !existsSync(t)) throw new UsageError(`--store ${t}: no such file`);
  }
  if (v.traces !== undefined && !existsSync(v.traces))
    throw new UsageError(`--traces ${v.traces}: no such file (a trace store that agent-sessions otlp or the extension wrote)`);
  const opener: StoreOpener = async (target, name) => {
    // A coding agent may point the server at any session file: it leaves the file's folder as it found it.
    const sidecars = isServerAddress(target) ? undefined : markSidecars(target);
    let opened;
    try {
      // Kept totals: a server answers many calls on one connection, so counts are caught up, not recounted (file A).
      opened = await openStore(target, { keyPrefix: v['key-prefix'], keepTotals: true });
    } catch (err) {
      if (sidecars) removeSidecarsLeft(sidecars);
      throw err;
    }
    if (opened.kind === 'server') return { store: serverQueryStore(opened.source, name, opened.label), close: () => closeStore(opened) };
    const db = opened.db;
    return {
      store: fileQueryStore(db, name),
      fileState: () => db.fileState(),
      close: async () => {
        // Beside a file that replaced the one read, the -wal and -shm are the old file's: not ours to tidy (spec §11).
        const same = db.fileState() === 'ok';
        await closeStore(opened);
        if (sidecars && same) removeSidecarsLeft(sidecars);
      },
    };
  };
  const stores = new StoreSet(opener, targets, v['only-stores'] !== true);
  const traceSidecars = v.traces !== undefined ? markSidecars(v.traces) : undefined;
  const traces = v.traces !== undefined ? TraceStore.open(v.traces, { readonly: true }) : undefined;
  const server = createMcpServer({ stores, version, ...(traces ? { traces } : {}) });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  const stop = () => void server.close();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // The transport does not notice stdin's end by itself: the client closing it is the end of the session.
  process.stdin.on('end', stop);
  const serving = `agent-sessions mcp: serving ${
    targets.length === 0
      ? stores.takesOtherFiles
        ? 'no stores (tools take a file path)'
        : 'no stores (--only-stores: every call is refused)'
      : stores
          .list()
          .map((s) => `${s.name} (${s.location})`)
          .join(', ')
  } over stdio`;
  // VS Code logs every stderr line of an MCP server as a warning, and this line is the normal start: the servers it
  // starts (src/extension/codingAgents) ask for it as an MCP log message at level info, once the client is ready.
  const toClient = process.env[MCP_LOG_ENV] === 'client';
  if (toClient)
    server.server.oninitialized = () =>
      void server.server.sendLoggingMessage({ level: 'info', logger: 'agent-sessions', data: serving }).catch(() => undefined);
  try {
    await server.connect(new StdioServerTransport());
    if (!toClient) process.stderr.write(`${serving}\n`);
    await closed;
    return EXIT.ok;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.stdin.off('end', stop);
    await stores.close();
    traces?.close();
    if (traceSidecars) removeSidecarsLeft(traceSidecars);
  }
}
