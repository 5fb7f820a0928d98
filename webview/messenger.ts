/**
 * The webview's side of the protocol: `post` accepts only webview→host messages, `request` correlates responses
 * by id and fails after a timeout, `onSnapshot` receives the host's full snapshots.
 */
import { REQUEST_TIMEOUT_MS, type HostMessage, type RequestMethod, type Requests, type WebviewMessage } from '../src/shared/protocol';
import type { RunEvent } from '../src/shared/runEvents';
import type { SnapshotView } from '../src/shared/viewModels';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
let nextId = 1;
const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: number }>();
let snapshotListener: ((s: SnapshotView) => void) | undefined;
let runListener: ((e: RunEvent) => void) | undefined;

export function post(message: WebviewMessage): void {
  vscode.postMessage(message);
}

export function request<M extends RequestMethod>(method: M, params: Requests[M]['params']): Promise<Requests[M]['result']> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = window.setTimeout(() => {
      pending.delete(id);
      reject(new Error(`The extension did not answer ${method} within ${REQUEST_TIMEOUT_MS / 1000} s.`));
    }, REQUEST_TIMEOUT_MS);
    pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
    post({ kind: 'request', id, method, params });
  });
}

export function onSnapshot(listener: (s: SnapshotView) => void): void {
  snapshotListener = listener;
}

export function onRunEvent(listener: (e: RunEvent) => void): void {
  runListener = listener;
}

/** The view's persisted state (restored after a window reload through the host's serializer, not read here). */
export const state = {
  set: (s: unknown): void => vscode.setState(s),
};

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const m = event.data;
  if (typeof m !== 'object' || m === null) return;
  if (m.kind === 'snapshot/didChange') snapshotListener?.(m.snapshot);
  else if (m.kind === 'run/didEvent') runListener?.(m.event);
  else if (m.kind === 'response') {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    window.clearTimeout(p.timer);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(m.error));
  }
});
