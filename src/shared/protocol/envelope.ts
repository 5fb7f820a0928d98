/**
 * The messages every webview panel shares with the extension host, whatever it shows: a request and its response, the
 * change notice, and the check the host runs on what arrives. Each view adds only its own requests map
 * (`conversation.ts`, `compare.ts`) and, for the conversation view, its own notifications; so one messenger in the
 * page and one panel host in the extension (`src/extension/core/panelHost.ts`) serve both views.
 * Names: notifications host→webview in past tense (`session/didChange`), commands imperative, requests `noun/verb`.
 */

/** A requests map (`Requests`, `CompareRequests`): method → its parameters and its result. */
export type RequestMap<R> = { [M in keyof R]: { params: unknown; result: unknown } };

/**
 * What a change notice says may have changed. The host cannot tell which tables another process wrote, so a write
 * it only noticed is `ROW_CHANGES`; the conversation view maps each kind to the windows it shows (`refreshPlan` in
 * `webview/conversation/logic/conversationModel.ts`), the compare view reads its comparison again on any.
 */
export type ChangeKind =
  /** Turns and their items. */
  | 'turns'
  /** The branch list: branches added or deleted, their turn counts. */
  | 'branches'
  /** The token usage and tool tables. */
  | 'usage'
  /** The extension's current branch of this session moved (nothing was written to the file). */
  | 'current-branch'
  /** The session's pricing model or the price table changed (nothing was written to the file): costs differ. */
  | 'pricing'
  /** The trace store's spans of this session changed (nothing was written to the file): latency and timelines differ. */
  | 'traces'
  /** The review data of this session changed (nothing was written to the file): verdicts, tags, notes. */
  | 'reviews'
  /** A run recorded replay marks for this session (nothing was written to the file): tool cards' marks differ. */
  | 'replay'
  /** The history guard recorded a layer of this session (nothing was written to the file): its layers differ. */
  | 'layers'
  /** The database was reopened, closed, became unreadable or changed read-only state: everything may differ. */
  | 'database';

/** The kinds of a write to the file that the host noticed but cannot attribute to a table. */
export const ROW_CHANGES: readonly ChangeKind[] = ['turns', 'branches', 'usage'];

/** A coalesced change notice: `seq` grows by one per notice of a panel, `what` lists each kind once. */
export interface ChangeNotice {
  seq: number;
  what: ChangeKind[];
}

/** webview → host: a request of the view's map (`Method`), answered by one `response` with the same `id`. */
export interface RequestMessage<Method extends string = string> {
  kind: 'request';
  id: number;
  method: Method;
  params: unknown;
}

/**
 * webview → host. `link/open` is a link clicked in rendered Markdown (the host asks before opening it); it is no
 * request of a map, so it is part of the envelope, and a panel whose page renders no links ignores it.
 */
export type WebviewMessage<Method extends string = string> = RequestMessage<Method> | { kind: 'link/open'; url: string };

/** host → webview: the answer to one request. */
export type ResponseMessage =
  { kind: 'response'; id: number; ok: true; result: unknown } | { kind: 'response'; id: number; ok: false; error: string };

/** host → webview: something the view may show changed; it re-requests what it shows and drops replies to older requests. */
export type ChangeNoticeMessage = { kind: 'session/didChange' } & ChangeNotice;

/**
 * host → webview: request `id` is still being answered and advanced (a first computation of kept totals over a big
 * session: `done` rows so far, of `total`, 0 when not known). The page restarts the request's timeout and may show it.
 */
export type ProgressMessage = { kind: 'progress'; id: number; done: number; total: number };

/** host → webview: what every panel may send its page. A view's own notifications are added in its protocol file. */
export type EnvelopeMessage = ChangeNoticeMessage | ResponseMessage | ProgressMessage;

/** How long the webview waits for a response before failing the request. */
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * A webview message as the host receives it: the same kinds, but a request's method is any string until the host
 * checks it against the panel's requests map (an unknown method gets an error response, not silence).
 */
export type ReceivedWebviewMessage =
  Exclude<WebviewMessage, { kind: 'request' }> | { kind: 'request'; id: number; method: string; params: object };

/** Type guard for messages arriving at the host (they come from a frame: validate before use). */
export function isWebviewMessage(value: unknown): value is ReceivedWebviewMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  switch (m.kind) {
    case 'request':
      return typeof m.id === 'number' && typeof m.method === 'string' && typeof m.params === 'object' && m.params !== null;
    case 'link/open':
      return typeof m.url === 'string';
    default:
      return false;
  }
}
