/**
 * The one protocol between the extension host and the conversation view. Messages are discriminated unions per
 * direction; requests are keys of one `Requests` map, so parameter and result types flow from the key.
 * Names: notifications host→webview in past tense (`snapshot/didChange`), commands imperative, requests `noun/verb`.
 */
import type { RunEvent } from './runEvents';
import type { ItemView, SnapshotView, TablesView, TurnPageView } from './viewModels';

/** Requests the webview makes, with their parameters and results. */
export interface Requests {
  'turns/get': { params: { branchId: string; afterTurn: number | null; limit: number }; result: TurnPageView };
  'turn/items': { params: { branchId: string; turn: number }; result: ItemView[] };
  'tables/get': { params: { branchId: string | null }; result: TablesView };
  'branch/create': { params: { fromBranchId: string; branchTurnNumber: number; name: string }; result: { branchId: string } };
  'branch/switch': { params: { branchId: string }; result: { branchId: string } };
  /** The host asks for confirmation; `deleted` is false when the user declined. */
  'branch/delete': { params: { branchId: string }; result: { deleted: boolean } };
  /** Starts an agent run on a branch; its events arrive as `run/didEvent`. Resolves once the run has started. */
  'run/start': { params: { branchId: string; input: string }; result: { runId: string } };
  'run/stop': { params: { runId: string }; result: { stopped: boolean } };
}
export type RequestMethod = keyof Requests;

/** webview → host */
export type WebviewMessage =
  | { kind: 'ready' }
  | { kind: 'request'; id: number; method: RequestMethod; params: unknown }
  /** The branch the user is looking at, so the next full snapshot shows the same one. */
  | { kind: 'selection/set'; branchId: string }
  /** A link in rendered Markdown; the host asks before opening it. */
  | { kind: 'link/open'; url: string };

/** host → webview */
export type HostMessage =
  | { kind: 'snapshot/didChange'; snapshot: SnapshotView }
  | { kind: 'run/didEvent'; event: RunEvent }
  | { kind: 'response'; id: number; ok: true; result: unknown }
  | { kind: 'response'; id: number; ok: false; error: string };

/** How long the webview waits for a response before failing the request. */
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * A webview message as the host receives it: the same kinds, but a request's method is any string until the host
 * checks it against `Requests` (an unknown method gets an error response, not silence).
 */
export type ReceivedWebviewMessage =
  Exclude<WebviewMessage, { kind: 'request' }> | { kind: 'request'; id: number; method: string; params: object };

/** Type guard for messages arriving at the host (they come from a frame: validate before use). */
export function isWebviewMessage(value: unknown): value is ReceivedWebviewMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  switch (m.kind) {
    case 'ready':
      return true;
    case 'request':
      return typeof m.id === 'number' && typeof m.method === 'string' && typeof m.params === 'object' && m.params !== null;
    case 'link/open':
      return typeof m.url === 'string';
    case 'selection/set':
      return typeof m.branchId === 'string';
    default:
      return false;
  }
}
