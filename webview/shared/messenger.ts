/**
 * The webview's side of the protocol: `post` accepts only webview→host messages, `request` correlates responses
 * by id and fails after a timeout, and one listener each receives the host's change notices, reveals and run events.
 */
import type { HostMessage, RequestMethod, Requests } from '../../src/shared/protocol/conversation';
import { REQUEST_TIMEOUT_MS, type ChangeNotice, type WebviewMessage } from '../../src/shared/protocol/envelope';
import type { CompareMethod, CompareRequests } from '../../src/shared/protocol/compare';
import type { RunEvent } from '../../src/shared/protocol/runEvents';
import type { RevealView } from '../../src/shared/protocol/conversationViews';
import type { AgentChoicesView } from '../../src/shared/agentChoices';
import { t } from './l10n';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the host's messages are handed to. */
export interface HostListeners {
  notice(n: ChangeNotice): void;
  reveal(r: RevealView): void;
  run(e: RunEvent): void;
  /** The agent choices changed (the conversation view's pickers). */
  agents?(view: AgentChoicesView): void;
}

const vscode = acquireVsCodeApi();
let nextId = 1;
interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: number;
  /** Restarts the timeout: the host said the answer is still coming. */
  rearm(): void;
  onProgress?: (done: number, total: number) => void;
}
const pending = new Map<number, Pending>();
let listeners: HostListeners | undefined;

export function post(message: WebviewMessage<RequestMethod | CompareMethod>): void {
  vscode.postMessage(message);
}

/** `onProgress`: told how a long answer advances (the host's `progress` messages, which also restart the timeout). */
export function request<M extends RequestMethod>(
  method: M,
  params: Requests[M]['params'],
  onProgress?: (done: number, total: number) => void,
): Promise<Requests[M]['result']> {
  return send(method, params, onProgress) as Promise<Requests[M]['result']>;
}

/** `request` for the compare view's requests (src/shared/protocol/compare.ts). */
export function compareRequest<M extends CompareMethod>(
  method: M,
  params: CompareRequests[M]['params'],
): Promise<CompareRequests[M]['result']> {
  return send(method, params) as Promise<CompareRequests[M]['result']>;
}

function send(
  method: RequestMethod | CompareMethod,
  params: unknown,
  onProgress?: (done: number, total: number) => void,
): Promise<unknown> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const arm = (): number =>
      window.setTimeout(() => {
        pending.delete(id);
        reject(new Error(t('The extension did not answer {0} within {1} s.', method, REQUEST_TIMEOUT_MS / 1000)));
      }, REQUEST_TIMEOUT_MS);
    const entry: Pending = {
      resolve: resolve as (v: unknown) => void,
      reject,
      timer: arm(),
      rearm: () => {
        window.clearTimeout(entry.timer);
        entry.timer = arm();
      },
      onProgress,
    };
    pending.set(id, entry);
    post({ kind: 'request', id, method, params });
  });
}

export function listen(l: HostListeners): void {
  listeners = l;
}

/**
 * The view's own state, kept by VS Code while the panel lives (also across a recreated iframe) and handed to the
 * host's serializer after a window reload.
 */
export const state = {
  set: (s: unknown): void => vscode.setState(s),
  /** The saved selection, if the saved state has one. */
  selection: (): RevealView | null => {
    const s = vscode.getState() as { branchId?: unknown; turn?: unknown } | undefined;
    if (typeof s !== 'object' || s === null || typeof s.branchId !== 'string') return null;
    return { branchId: s.branchId, turn: typeof s.turn === 'number' && Number.isInteger(s.turn) ? s.turn : null };
  },
};

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const m = event.data;
  if (typeof m !== 'object' || m === null) return;
  switch (m.kind) {
    case 'session/didChange':
      return listeners?.notice({ seq: m.seq, what: m.what });
    case 'selection/reveal':
      return listeners?.reveal({ branchId: m.branchId, turn: m.turn });
    case 'run/didEvent':
      return listeners?.run(m.event);
    case 'agents/didChange':
      return listeners?.agents?.(m.view);
    case 'progress': {
      const p = pending.get(m.id);
      p?.rearm();
      p?.onProgress?.(m.done, m.total);
      return;
    }
    case 'response': {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      window.clearTimeout(p.timer);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(m.error));
    }
  }
});
