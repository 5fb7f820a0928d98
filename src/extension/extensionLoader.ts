/**
 * What VS Code loads (`main`: dist/extension.js): it loads the extension itself, dist/extensionMain.js (built from
 * extension.ts), through V8's code cache kept in the global storage (src/store/files/codeCache.ts), and hands it `activate` and
 * `deactivate`. Holds nothing else, so the code VS Code compiles before `activate` runs is a few kilobytes.
 *
 * `activate` returns at once with a promise of the extension's API: the bundle and its cache are read and checksummed
 * off the extension host's thread (libuv's pool), which every extension and VS Code's own API share, and only then are
 * the bundle compiled (or read from the cache by V8), run and activated, on that thread. VS Code waits for the promise
 * before it runs one of our commands, resolves a view of ours or restores a conversation panel, so nothing is asked of
 * the extension before it is there (issue 43, "a light start").
 */
import { join } from 'node:path';
import type * as vscode from 'vscode';
import type { AgentSessionsApi } from './extension';
import { loadWithCodeCacheAsync } from '../store/files/codeCache';

interface ExtensionMain {
  activate(context: vscode.ExtensionContext): AgentSessionsApi;
  deactivate(): Promise<void>;
}

let main: Promise<ExtensionMain> | undefined;

export function activate(context: vscode.ExtensionContext): Promise<AgentSessionsApi> {
  main = loadWithCodeCacheAsync(join(__dirname, 'extensionMain.js'), join(context.globalStorageUri.fsPath, 'code-cache')).then(
    (loaded) => loaded.exports as ExtensionMain,
  );
  return main.then((m) => m.activate(context));
}

export async function deactivate(): Promise<void> {
  // A load that failed has nothing to stop; VS Code has shown its error already.
  const loaded = await main?.catch(() => undefined);
  await loaded?.deactivate();
}
