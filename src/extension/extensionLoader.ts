/**
 * What VS Code loads (`main`: dist/extension.js): it loads the extension itself, dist/extensionMain.js (built from
 * extension.ts), through V8's code cache kept in the global storage (src/store/files/codeCache.ts), and hands it `activate` and
 * `deactivate`. Holds nothing else, so the code VS Code compiles before `activate` runs is a few kilobytes.
 */
import { join } from 'node:path';
import type * as vscode from 'vscode';
import type { AgentSessionsApi } from './extension';
import { loadWithCodeCache } from '../store/files/codeCache';

interface ExtensionMain {
  activate(context: vscode.ExtensionContext): AgentSessionsApi;
  deactivate(): Promise<void>;
}

let main: ExtensionMain | undefined;

export function activate(context: vscode.ExtensionContext): AgentSessionsApi {
  const loaded = loadWithCodeCache(join(__dirname, 'extensionMain.js'), join(context.globalStorageUri.fsPath, 'code-cache'));
  main = loaded.exports as ExtensionMain;
  return main.activate(context);
}

export async function deactivate(): Promise<void> {
  await main?.deactivate();
}
