/**
 * Coding agents reading the sessions (issue 27, docs/mcp.md "In VS Code"): the query tools as Language Model tools,
 * `agent-sessions mcp` offered as an MCP server definition, and the hand-over to the chat. Made once by `activate`.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { ExtensionStores, type TraceSource } from './extensionStores';
import { HandOver } from './handOver';
import { registerQueryTools } from './languageModelTools';
import { MCP_PROVIDER_ID } from './lmToolManifest';
import { AgentSessionsMcpProvider } from './mcpProvider';

export interface CodingAgents extends vscode.Disposable {
  /** What the tools read: the open stores, files named by path, the trace store. */
  readonly stores: ExtensionStores;
  /**
   * The registered tools' implementations by name. Tests call them directly where `vscode.lm.invokeTool` would ask the
   * user first (a file that is not open).
   */
  readonly tools: ReadonlyMap<string, vscode.LanguageModelTool<Record<string, unknown>>>;
  /** The MCP server definition provider; undefined where VS Code has no MCP provider API. */
  readonly mcp: AgentSessionsMcpProvider | undefined;
  readonly handOver: HandOver;
}

export function startCodingAgents(
  context: vscode.ExtensionContext,
  registry: DatabaseRegistry,
  traces: TraceSource,
  log: vscode.LogOutputChannel,
): CodingAgents {
  const dist = (file: string): string => join(context.extensionUri.fsPath, 'dist', file);
  const stores = new ExtensionStores(registry, dist('searchWorker.js'), traces, () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  const subscriptions: vscode.Disposable[] = [stores];
  const tools = registerQueryTools(stores, subscriptions);
  let mcp: AgentSessionsMcpProvider | undefined;
  // The provider API is VS Code 1.101's; a host without it (a fork, an older server) gets the tools only.
  if (typeof vscode.lm.registerMcpServerDefinitionProvider === 'function') {
    const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0');
    mcp = new AgentSessionsMcpProvider(registry, dist('cli.js'), traces.path, context.secrets, version, log);
    subscriptions.push(mcp, vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, mcp));
  }
  return {
    stores,
    tools,
    mcp,
    handOver: new HandOver(),
    dispose: () => {
      for (const d of subscriptions.reverse()) d.dispose();
    },
  };
}
