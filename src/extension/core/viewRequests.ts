/**
 * The conversation view's request table: every request the view makes (`Requests` in
 * src/shared/protocol/conversation.ts) with its handler. Each feature folder contributes the requests it answers
 * (`…Requests(services)` returning a slice, as for the command table); `activate` hands the whole table to the panels
 * once. A request in `Requests` without a handler fails to compile (`ConversationRequestTable` needs every key); the
 * parameters are checked before a handler runs (conversation/requestChecks.ts), so no handler sees an unchecked value.
 */
import type { HostMessage, RequestMethod, Requests } from '../../shared/protocol/conversation';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import type { BranchNode, SessionReader } from '../../store';

/** The handshake is the panel's own: it answers what the panel was opened to show, so no feature contributes it. */
export type PanelMethod = 'view/ready';

/** A request a feature answers. */
export type FeatureMethod = Exclude<RequestMethod, PanelMethod>;

/** What a handler knows of the view that asked: its session and how the panel reads it. */
export interface ShownSession {
  /** The session the view shows (the object the panel was opened for). */
  readonly target: SessionRef;
  /** The session's database, read for this request (cancelled with it); throws a `UserFacingError` when unreadable. */
  db(): SessionReader;
  /** The same, or undefined when the database is not open or cannot be read (the header still shows why). */
  reader(): SessionReader | undefined;
  /** The branch tree, read at most once per change and shared by the requests that need it. */
  branches(db: SessionReader): Promise<readonly BranchNode[]>;
  /** Sends the view one of its notifications (a run's events). */
  post(message: HostMessage): void;
}

/** Answers one request: its checked parameters and the view that asked, its result (or a promise of it). */
export type RequestHandler<M extends RequestMethod> = (
  params: Requests[M]['params'],
  view: ShownSession,
) => Requests[M]['result'] | Promise<Requests[M]['result']>;

/** Every request of the view but the handshake, by method: a missing one is a compile error where it is assembled. */
export type ConversationRequestTable = { readonly [M in FeatureMethod]: RequestHandler<M> };

/** The part of the table one feature contributes. */
export type RequestsOf<M extends FeatureMethod> = Pick<ConversationRequestTable, M>;
