/**
 * `agent-sessions mcp` offered to VS Code (`vscode.lm.registerMcpServerDefinitionProvider`, VS Code 1.101+), so the
 * server appears in the MCP servers list without a hand-written configuration: the bundled CLI (dist/cli.js) run on
 * the extension host's own Node, serving exactly the session files open in the Sessions view (--only-stores) and the
 * extension's trace store (mcpServerPlans.ts). Each connected PostgreSQL or Redis store is a server of its own,
 * because the CLI takes a server's password from one environment variable (`AGENT_SESSIONS_PASSWORD`); the password
 * comes from secret storage when VS Code starts the server (`resolveMcpServerDefinition`), never in the listed
 * definition. When the open stores change, VS Code hears it (`onDidChangeMcpServerDefinitions`), asks again and, the
 * definition's version having changed, restarts the server before the next chat request.
 */
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { passwordKey } from '../databases/remoteAddress';
import { redactUrl } from '../../store/remote/remoteErrors';
import { addressWithoutSecret, mcpServerPlans, type McpServerPlan } from './mcpServerPlans';

export class AgentSessionsMcpProvider implements vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeMcpServerDefinitions = this.changed.event;
  private readonly subscription: vscode.Disposable;
  private lastKey = '';
  private missingLogged = false;

  constructor(
    private readonly registry: DatabaseRegistry,
    /** dist/cli.js */
    private readonly cliPath: string,
    /** The extension's trace store (offered when it exists). */
    private readonly tracePath: string,
    private readonly secrets: vscode.SecretStorage | undefined,
    private readonly version: string,
    private readonly log?: vscode.LogOutputChannel,
  ) {
    // Only a change of what is open matters (a write to a file does not change the server's arguments).
    this.subscription = registry.onDidChange((change) => {
      if (change.kind !== 'list' && change.kind !== 'state') return;
      const key = JSON.stringify(this.plans().map((p) => p.args));
      if (key === this.lastKey) return;
      this.lastKey = key;
      this.changed.fire();
    });
  }

  /** The servers offered now (what `provideMcpServerDefinitions` turns into definitions). */
  plans(): McpServerPlan[] {
    const entries = this.registry.list();
    const files = entries.filter((e) => !e.remote).map((e) => e.path);
    const servers = entries.filter((e) => e.remote).map((e) => e.path);
    return mcpServerPlans(this.cliPath, files, servers, existsSync(this.tracePath) ? this.tracePath : undefined, this.version);
  }

  provideMcpServerDefinitions(): vscode.McpStdioServerDefinition[] {
    if (!existsSync(this.cliPath)) {
      if (!this.missingLogged) this.log?.warn(`MCP server not offered: ${this.cliPath} is missing (build it with node esbuild.mjs)`);
      this.missingLogged = true;
      return [];
    }
    const plans = this.plans();
    for (const e of this.registry.list())
      if (e.remote && !addressWithoutSecret(e.path))
        this.log?.warn(
          `MCP server not offered for ${redactUrl(e.path)}: its address holds a secret that would show in the server's arguments`,
        );
    this.lastKey = JSON.stringify(plans.map((p) => p.args));
    return plans.map((p) => {
      // The extension host's Node: on desktop that is Electron's binary, which runs a script as Node only when told.
      const definition = new vscode.McpStdioServerDefinition(p.label, process.execPath, p.args, { ...p.env }, p.version);
      return definition;
    });
  }

  /** Adds a server store's password from secret storage as the server starts (it is never in the listed definition). */
  async resolveMcpServerDefinition(server: vscode.McpStdioServerDefinition): Promise<vscode.McpStdioServerDefinition> {
    const plan: McpServerPlan | undefined = this.plans().find((p) => p.label === server.label);
    if (plan?.address === undefined) return server;
    const password = (this.secrets ? await this.secrets.get(passwordKey(plan.address)) : undefined) ?? plan.addressPassword;
    if (password !== undefined) server.env = { ...server.env, AGENT_SESSIONS_PASSWORD: password };
    return server;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
