import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AgentSessionsApi } from '../../src/extension/extension';
import type { TreeNode } from '../../src/extension/core/treeNodes';
import { tempDir } from '../support/tempFiles';
import type { ConversationPanels } from '../../src/extension/conversation/conversationPanel';
import type { HostMessage } from '../../src/shared/protocol/conversation';
import { AdvancedSQLiteSession } from '../../src/store';

export const EXTENSION_ID = 'agent-session-inspector.agent-session-inspector';
export const fixtures = process.env.ASI_FIXTURES ?? join(__dirname, '..', '..', 'test', 'fixtures');

/** The activated extension's API (activating it if needed), after start-up work finished. */
export async function api(): Promise<AgentSessionsApi> {
  const ext = vscode.extensions.getExtension<AgentSessionsApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not loaded`);
  const a = ext.isActive ? ext.exports : await ext.activate();
  await a.ready;
  return a;
}

export function extensionPath(): string {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not loaded`);
  return ext.extensionPath;
}

export interface Scratch {
  dir: string;
  copy(fixture: string): string;
  cleanup(): void;
}

export function scratch(): Scratch {
  const { dir, cleanup } = tempDir('asi-int-');
  return {
    dir,
    copy(fixture: string) {
      const target = join(dir, fixture.split('/').pop() as string);
      copyFileSync(join(fixtures, fixture), target);
      return target;
    },
    cleanup,
  };
}

/** Labels and descriptions of a node's children, as the tree shows them. */
export async function childRows(
  a: AgentSessionsApi,
  node?: TreeNode,
): Promise<{ node: TreeNode; label: string; description: string; contextValue: string }[]> {
  const pairs = await a.tree.children(node);
  return pairs.map(([n, item]) => ({
    node: n,
    label: typeof item.label === 'string' ? item.label : (item.label?.label ?? ''),
    description: typeof item.description === 'string' ? item.description : '',
    contextValue: item.contextValue ?? '',
  }));
}

/** The child whose label is `label`, or a failed assertion naming what was there. */
export async function child(a: AgentSessionsApi, node: TreeNode | undefined, label: string): Promise<TreeNode> {
  const rows = await childRows(a, node);
  const row = rows.find((r) => r.label === label);
  if (!row) throw new Error(`no '${label}' under ${JSON.stringify(node)}; found ${rows.map((r) => r.label).join(', ')}`);
  return row.node;
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Closes every open database, so each test starts from an empty view. */
export async function closeAll(a: AgentSessionsApi): Promise<void> {
  for (const e of a.registry.list()) await a.registry.close(e.path);
  a.failures.length = 0;
}

/**
 * Registers hooks that give each test a fresh scratch folder and an empty view (no open databases), and clean up
 * after it. Returns a getter for the current test's scratch folder.
 */
export function freshScratchPerTest(): () => Scratch {
  let current: Scratch | undefined;
  beforeEach(async () => {
    current = scratch();
    await closeAll(await api());
  });
  afterEach(async () => {
    await closeAll(await api());
    current?.cleanup();
  });
  return () => {
    if (!current) throw new Error('no scratch folder outside a test');
    return current;
  };
}

/**
 * Sends a request to a conversation panel as its page would (the panel's `receive`) and returns the host's response,
 * so a test checks the real handler and its parameter checks without a page.
 */
export async function askPanel(panel: ReturnType<ConversationPanels['open']>, method: string, params: unknown): Promise<HostMessage> {
  const webview = panel.panel.webview;
  const post = webview.postMessage.bind(webview);
  const id = 900_000 + Math.floor(Math.random() * 100_000);
  let answer: HostMessage | undefined;
  webview.postMessage = (m: HostMessage) => {
    if (m.kind === 'response' && m.id === id) answer = m;
    return post(m);
  };
  try {
    await (panel as unknown as { receive(m: unknown): Promise<void> }).receive({ kind: 'request', id, method, params });
    return (await waitFor(() => answer, 10_000, `the ${method} answer`))!;
  } finally {
    webview.postMessage = post;
  }
}

/**
 * Writes session `trip`: turn 1 plans a day in Lisbon, turn 2 asks for the weather (a get_weather call with `args`, its
 * output, the answer); with `porto`, a branch `porto` forked before turn 2 asks about Porto instead.
 */
export async function writeTripSession(path: string, options: { args?: string; porto?: boolean } = {}): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
  try {
    await s.addItems([
      { role: 'user', content: 'Plan a day in Lisbon.' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Start at Belém.' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: 'And the weather?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: options.args ?? '{"city":"Lisbon"}' },
      { type: 'function_call_output', call_id: 'c1', output: '22°C and sunny' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Sunny, 22 °C.' }] },
    ] as never);
    if (options.porto) {
      await s.createBranchFromTurn(2, 'porto');
      await s.addItems([
        { role: 'user', content: 'What about Porto?' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Cloudy.' }] },
      ] as never);
    }
  } finally {
    s.close();
  }
}
