/**
 * What the MCP servers VS Code starts are given (docs/mcp.md "In VS Code"): their arguments, environment and version,
 * from the stores open in the Sessions view. Kept free of `vscode` so that unit tests check it in Node.
 *
 * Each runs with --only-stores: a tool call reads the open stores and nothing else. VS Code runs read-only MCP tools
 * without asking, so a server that took any path would read a file the user never opened, around the confirmation the
 * Language Model tools ask for such a file; opening the file in VS Code is that confirmation here.
 *
 * No secret goes into the arguments or the label (VS Code shows both, and a process's arguments are visible to every
 * user of the machine): a server store's password travels in `AGENT_SESSIONS_PASSWORD`, added only as VS Code starts
 * the server (`AgentSessionsMcpProvider.resolveMcpServerDefinition`).
 */
import { createHash } from 'node:crypto';
import * as l10n from '@vscode/l10n';
import { splitPassword } from '../databases/remoteAddress';

/** One MCP server to offer: the files' server, or one server store's. */
export interface McpServerPlan {
  label: string;
  args: string[];
  /**
   * The environment on top of the extension host's. AGENT_SESSIONS_DB is emptied: the CLI serves it when given no
   * store, which would read a file nobody opened when no session file is open.
   */
  env: Record<string, string>;
  /** The extension's version and a digest of the arguments: a new version when the open stores change. */
  version: string;
  /** For a server store: its address as the Sessions view holds it (the key of its password in secret storage). */
  address?: string;
  /** For a server store whose address itself carried a password (`?password=`): that password, for the environment. */
  addressPassword?: string;
}

/** Query parameters that hold a secret other than the password: those cannot be moved to the environment. */
const SECRET_PARAMETER = /pass|secret|token/i;

/**
 * The address without its password (`splitPassword`, the one owner of that rule: `user:pass@` and `?password=`) and
 * that password; undefined when another secret stays in it (`?sslpassword=`), which only the arguments could carry.
 */
export function addressWithoutSecret(address: string): { address: string; password?: string } | undefined {
  const { address: clean, password } = splitPassword(address);
  let keys: string[];
  try {
    keys = [...new URL(clean).searchParams.keys()];
  } catch {
    // Not parsed, so not known to be free of a secret: offered only when nothing in it looks like credentials.
    return /@/.test(clean) || SECRET_PARAMETER.test(clean) ? undefined : { address: clean };
  }
  if (keys.some((k) => SECRET_PARAMETER.test(k))) return undefined;
  return password === undefined ? { address: clean } : { address: clean, password };
}

/**
 * The servers to offer for the stores open now: one for the session files (always, so that it stays in VS Code's
 * list; with none open it serves nothing and says how the user opens one), one per server store (the CLI takes one
 * server password). A server store whose address holds a secret that cannot be moved to the environment is left out.
 */
export function mcpServerPlans(
  cliPath: string,
  files: readonly string[],
  servers: readonly string[],
  tracePath: string | undefined,
  extensionVersion: string,
): McpServerPlan[] {
  const stores = (targets: readonly string[]): string[] => targets.flatMap((t) => ['--store', t]);
  // AGENT_SESSIONS_MCP_LOG (src/cli/mcpCommand.ts `MCP_LOG_ENV`): VS Code logs a server's stderr as warnings, so the
  // normal start-up line comes as an MCP log message at level info instead.
  const env = { ELECTRON_RUN_AS_NODE: '1', AGENT_SESSIONS_DB: '', AGENT_SESSIONS_MCP_LOG: 'client' };
  const plan = (label: string, args: string[]): McpServerPlan => ({ label, args, env, version: versionOf(extensionVersion, args) });
  const plans = [
    plan(l10n.t('Agent Sessions (open session files)'), [
      cliPath,
      'mcp',
      '--only-stores',
      ...stores(files),
      ...(tracePath ? ['--traces', tracePath] : []),
    ]),
  ];
  for (const address of servers) {
    const clean = addressWithoutSecret(address);
    if (!clean) continue;
    plans.push({
      ...plan(l10n.t('Agent Sessions ({0})', clean.address), [cliPath, 'mcp', '--only-stores', ...stores([clean.address])]),
      address,
      ...(clean.password !== undefined ? { addressPassword: clean.password } : {}),
    });
  }
  return plans;
}

/** VS Code restarts a server whose definition's version changed (on the next chat request): so the served list is current. */
function versionOf(extensionVersion: string, args: readonly string[]): string {
  return `${extensionVersion}+${createHash('sha256').update(JSON.stringify(args)).digest('hex').slice(0, 12)}`;
}
