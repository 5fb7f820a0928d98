/**
 * The agent a run uses, built from settings: the built-in agent (a model behind any OpenAI-compatible Responses
 * API, instructions, optional MCP stdio servers for tools) or the user's own agent from a workspace module.
 *
 * Every model request goes through an OpenAI client made here from the given base URL and key. Nothing reads the
 * SDK's global defaults or the `OPENAI_*` environment variables at request time, so two configurations (and tests)
 * never share a client, and a key is only ever sent to the server it was configured for.
 */
import { Agent, MCPServerStdio, OpenAIResponsesModel, type Model, type ModelProvider } from '@openai/agents';
import OpenAI from 'openai';
import { basename } from 'node:path';
import { describeBaseUrl, redactSecrets } from './apiKey';
import { UntrustedWorkspaceError, UserAgentModuleCache, loadUserAgentModule, type LoadedUserAgent } from './userAgentModule';
import { errorMessage } from '../shared/errorMessage';

/** The OpenAI API, used when no base URL is configured. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Settings of the agent (the host reads them from `agentSessions.agent.*`). Plain data, no secrets. */
export interface AgentConfig {
  /** Model name sent to the server (`gpt-4.1`, `llama3.1`, …); also the default for a module agent without one. */
  model: string;
  /**
   * Run a module agent on `model` even when it names a model of its own: a what-if retry with a picked model must
   * run on that model, or the branch would be labelled with a model it never used.
   */
  forceModel?: boolean;
  /** Instructions of the built-in agent. */
  instructions: string;
  /** An OpenAI-compatible server's base URL, up to and including `/v1`; undefined: the OpenAI API. */
  baseUrl?: string;
  /** MCP servers for the built-in agent, one command line each, started without a shell (trusted workspaces only). */
  mcpServers?: string[];
  /** A workspace JavaScript module exporting the agent to use instead of the built-in one (trusted only). */
  agentModule?: string;
  /** Name of the built-in agent. */
  name?: string;
  /** Retries of a failed request by the OpenAI client (connection errors, 408/409/429/5xx); default 2. */
  maxRetries?: number;
  /** Timeout of one model request in milliseconds; default: the OpenAI client's (10 minutes). */
  timeoutMs?: number;
}

/** An agent ready to run, with what it started. Call `close()` when the configuration changes or on deactivate. */
export interface ConfiguredAgent {
  agent: Agent;
  /** Resolves model names (a module agent's `model: 'gpt-4.1'`, or none) with this configuration's client. */
  modelProvider: ModelProvider;
  source: 'built-in' | 'module';
  /** The server requests go to, for messages (no credentials). */
  endpoint: string;
  /** Strings error messages must never show: the key. */
  secrets: string[];
  /** Things the user should know (MCP servers skipped in an untrusted workspace, …). */
  warnings: string[];
  /** The loaded module, for `source: 'module'`. */
  module?: LoadedUserAgent;
  /** Stops the MCP servers this configuration started; idempotent. */
  close(): Promise<void>;
}

export interface CreateAgentOptions {
  /** VS Code's workspace trust: MCP servers and agent modules run code, so they are skipped/refused when false. */
  trusted: boolean;
  /** Working folder of MCP servers and base of a relative `agentModule` (the workspace folder). */
  cwd?: string;
  /** When set, `agentModule` must lie inside it. */
  allowedRoot?: string;
  /** Reuse loaded modules until they change (the host keeps one cache). */
  moduleCache?: UserAgentModuleCache;
  /** How long an MCP server may take to start and answer `initialize` (seconds; default 10). */
  mcpStartTimeoutSeconds?: number;
}

/** An MCP server did not start; nothing of this configuration keeps running. */
export class McpServerStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'McpServerStartError';
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** A command line could not be split into a program and arguments. */
export class CommandLineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandLineError';
  }
}

/**
 * An OpenAI client for `baseUrl` and `apiKey` only. Organisation, project and base URL are passed explicitly so
 * the client does not pick up `OPENAI_ORG_ID`, `OPENAI_PROJECT_ID` or `OPENAI_BASE_URL` from the environment.
 */
export function createOpenAIClient(config: Pick<AgentConfig, 'baseUrl' | 'maxRetries' | 'timeoutMs'>, apiKey: string): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: config.baseUrl ?? OPENAI_BASE_URL,
    organization: null,
    project: null,
    maxRetries: config.maxRetries ?? 2,
    ...(config.timeoutMs !== undefined ? { timeout: config.timeoutMs } : {}),
  });
}

/** A model provider on one client: every model name (or none: `defaultModel`) becomes a Responses model. */
export class ClientModelProvider implements ModelProvider {
  constructor(
    private readonly client: OpenAI,
    private readonly defaultModel: string,
  ) {}
  getModel(modelName?: string): Model {
    return new OpenAIResponsesModel(this.client, modelName || this.defaultModel);
  }
}

/**
 * Builds the agent of `config` with `apiKey` (resolve it with `resolveApiKey`). The built-in agent gets an
 * OpenAI Responses model on a client of its own and, in a trusted workspace, the configured MCP servers (started
 * here; a server that fails to start stops the others and throws `McpServerStartError`). With `agentModule`, the
 * module's agent is loaded instead (trusted only, else `UntrustedWorkspaceError`); models it names by string, or
 * not at all, use this configuration's client; a Model instance it brings is its own business.
 */
export async function createConfiguredAgent(config: AgentConfig, apiKey: string, options: CreateAgentOptions): Promise<ConfiguredAgent> {
  const client = createOpenAIClient(config, apiKey);
  const modelProvider = new ClientModelProvider(client, config.model);
  const endpoint = describeBaseUrl(config.baseUrl ?? OPENAI_BASE_URL);
  const secrets = [apiKey];
  const warnings: string[] = [];

  if (config.agentModule) {
    if (!options.trusted) throw new UntrustedWorkspaceError(`The agent module ${config.agentModule}`);
    const loadOptions = { trusted: true, baseDir: options.cwd, allowedRoot: options.allowedRoot };
    const loaded = options.moduleCache
      ? await options.moduleCache.get(config.agentModule, undefined, loadOptions)
      : await loadUserAgentModule(config.agentModule, loadOptions);
    if (!loaded.sameSdk) {
      warnings.push(
        `The agent in ${basename(loaded.path)} was built with another copy of @openai/agents; export a factory ({ sdk, z }) => Agent to use the extension's.`,
      );
    }
    if ((config.mcpServers?.length ?? 0) > 0)
      warnings.push('agentSessions.agent.mcpServers apply to the built-in agent only; the module agent brings its own tools.');
    const agent = config.forceModel ? loaded.agent.clone({ model: modelProvider.getModel(config.model) }) : loaded.agent;
    return { agent, modelProvider, source: 'module', endpoint, secrets, warnings, module: loaded, close: async () => {} };
  }

  const servers: MCPServerStdio[] = [];
  const lines = (config.mcpServers ?? []).map((l) => l.trim()).filter((l) => l !== '');
  if (lines.length > 0 && !options.trusted) {
    // Starting a server runs a program named by (possibly workspace) settings: never in an untrusted workspace.
    warnings.push(`${lines.length} MCP server(s) not started: this workspace is not trusted, so the agent runs without their tools.`);
  } else {
    try {
      for (const [i, line] of lines.entries()) servers.push(await startMcpServer(line, i, options, secrets));
    } catch (err) {
      await closeAll(servers);
      throw err;
    }
  }
  const agent = new Agent({
    name: config.name ?? 'Agent Sessions assistant',
    instructions: config.instructions,
    model: modelProvider.getModel(config.model),
    mcpServers: servers,
  });
  let closed = false;
  return {
    agent,
    modelProvider,
    source: 'built-in',
    endpoint,
    secrets,
    warnings,
    close: async () => {
      if (closed) return;
      closed = true;
      await closeAll(servers);
    },
  };
}

async function startMcpServer(line: string, index: number, options: CreateAgentOptions, secrets: string[]): Promise<MCPServerStdio> {
  const [command, ...args] = parseCommandLine(line);
  if (command === undefined) throw new CommandLineError('An MCP server command line is empty.');
  const server = new MCPServerStdio({
    command,
    args,
    cwd: options.cwd,
    name: `mcp${index + 1}-${basename(command).replace(/\.[^.]*$/, '')}`,
    cacheToolsList: true,
    clientSessionTimeoutSeconds: options.mcpStartTimeoutSeconds ?? 10,
  });
  try {
    await server.connect();
  } catch (err) {
    await server.close().catch(() => undefined);
    const detail = errorMessage(err);
    throw new McpServerStartError(redactSecrets(`The MCP server '${line}' did not start: ${detail}`, secrets), { cause: err });
  }
  return server;
}

async function closeAll(servers: MCPServerStdio[]): Promise<void> {
  await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
}

/** Shell operators that mean the user expects a shell, which we do not use. */
const SHELL_OPERATORS = new Set(['|', '&', ';', '<', '>', '`']);

/**
 * Splits a command line into program and arguments the way a POSIX shell would for plain words and quotes, but
 * runs nothing: `'…'` is literal, `"…"` allows `\"` and `\\`, a backslash outside quotes escapes a quote, a
 * backslash, a space or `$` (any other backslash stays, so Windows paths work). Unquoted shell operators
 * (`| & ; < > \``) and `$(` are refused, since without a shell they would silently become arguments.
 */
export function parseCommandLine(line: string): string[] {
  const out: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    const next = line[i + 1];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && (next === '"' || next === '\\')) {
        word += next;
        i++;
      } else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && next !== undefined && /["'\\\s$]/.test(next)) {
      word += next;
      inWord = true;
      i++;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    } else if (SHELL_OPERATORS.has(c) || (c === '$' && next === '(')) {
      throw new CommandLineError(
        `'${c === '$' ? '$(' : c}' in "${line}" needs a shell, and MCP servers start without one. Quote it to pass it as an argument, or put the pipeline in a script.`,
      );
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new CommandLineError(`Unterminated ${quote === '"' ? 'double' : 'single'} quote in "${line}".`);
  if (inWord) out.push(word);
  return out;
}
