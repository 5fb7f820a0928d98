import { AsyncLocalStorage } from 'node:async_hooks';
import * as vscode from 'vscode';
import { isWebviewMessage, type ChangeKind, type EnvelopeMessage } from '../../shared/protocol/envelope';
import { ChangeNotices } from './changeNotices';
import { describeError } from './userError';
import { webviewHtml } from './webviewHtml';
import { WorkerSessionDatabase } from '../../store/worker/storeClient';

/** A panel's page: its title and the bundles it loads (webviewHtml.ts writes the HTML around them). */
export interface PanelPage {
  title: string;
  script: string;
  styles: string[];
}

/** The trace store's changes: a session's id, or undefined when any session's traces may have changed. */
export interface TraceChanges {
  onDidChange: vscode.Event<string | undefined>;
}

/** The review data's changes in this window: the session's id. */
export interface ReviewChanges {
  onDidChange: vscode.Event<string>;
}

/**
 * What every webview panel does the same way, so that a panel (`ConversationPanel`, `ComparePanel`) is mainly what it
 * shows: its page, its requests map and which changes concern it. The host writes the page (and its CSP), answers
 * each request of the page with `dispatch` (a `response` with the result, or with the error's message), and turns the
 * events a panel `listen`s to (plain events: the open databases', the pricing's, …; the host knows no feature) into one
 * `session/didChange` notice per burst, from the moment the page has said it started (`markReady`); before that, the
 * page's first load reads everything anyway.
 * `Notification` is what else the panel may send its page (the conversation view's reveals and run events).
 */
export abstract class PanelHost<Notification extends { kind: string } = never> implements vscode.Disposable {
  private started = false;
  private resolveReady: () => void = () => undefined;
  /** Resolves when the page has started (its handshake request arrived); commands and tests that drive it wait for it. */
  readonly whenReady = new Promise<void>((resolve) => (this.resolveReady = resolve));
  private readonly notices = new ChangeNotices((n) => this.post({ kind: 'session/didChange', ...n }));
  private readonly disposed = new vscode.EventEmitter<void>();
  /** Fires once the panel is gone (closed by the user, or disposed with its registry). */
  readonly onDidDispose = this.disposed.event;
  /**
   * Aborted when the panel goes: the reads it still has queued in the store worker are dropped there, and answers on
   * their way are never posted to a page that is gone.
   */
  private readonly lifetime = new AbortController();
  /** Disposed with the panel; a subclass adds its own listeners here. */
  protected readonly subscriptions: vscode.Disposable[] = [];
  /** The request being answered, for `scoped` (set around each request's handler, across its awaits). */
  private readonly request = new AsyncLocalStorage<{ signal: AbortSignal; progress: (done: number, total: number) => void }>();
  /** The request under way of each method in `latestWins`, so the next one can cancel it. */
  private readonly latest = new Map<string, AbortController>();
  /**
   * Methods whose newer request makes an older one useless (the view moved to another scope, branch or page and
   * ignores the older answer): the older one is cancelled, in the store worker too. A subclass names them.
   */
  protected readonly latestWins: ReadonlySet<string> = new Set();

  constructor(
    readonly panel: vscode.WebviewPanel,
    page: PanelPage,
    extensionUri: vscode.Uri,
  ) {
    // Set here and not only when the panel is created: a panel restored after a reload arrives without them.
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')],
    };
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'sessions.svg');
    panel.title = page.title;
    panel.webview.html = webviewHtml(panel.webview, extensionUri, page);
    this.subscriptions.push(
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  /** Answers one request of the page: checks its method and parameters against the panel's map and runs its handler. */
  protected abstract dispatch(method: string, params: unknown): Promise<unknown>;

  /**
   * Hears `event` for as long as the panel lives: `kinds` says what each one means for the page (nothing: `[]`). It is
   * called for every event, also before the page has started, so a panel can drop what it read there.
   */
  protected listen<T>(event: vscode.Event<T>, kinds: (e: T) => readonly ChangeKind[]): void {
    this.subscriptions.push(event((e) => this.noteChanges(kinds(e))));
  }

  /** A link clicked in the page's rendered Markdown. A page that renders none sends none; one that arrives is ignored. */
  protected openLink(_url: string): Promise<void> {
    return Promise.resolve();
  }

  /** Whether the page has started: until then nothing but answers is sent. */
  protected get ready(): boolean {
    return this.started;
  }

  /** The page's handshake arrived: change notices are sent from now on, and `whenReady` resolves. */
  protected markReady(): void {
    this.started = true;
    this.resolveReady();
  }

  /** Tells the page what may have changed (coalesced into one notice per burst); dropped before the page started. */
  protected noteChanges(kinds: readonly ChangeKind[]): void {
    if (this.started) this.notices.note(kinds);
  }

  /**
   * A database as this panel reads it: a file's requests end with the panel (see `lifetime`) or with the request they
   * answer (`latestWins`), and a long first computation tells the page how it advances (`progress`).
   */
  protected scoped<D>(db: D): D {
    if (!(db instanceof WorkerSessionDatabase)) return db;
    const request = this.request.getStore();
    if (!request) return this.panelScoped(db);
    return db.withSignal(AbortSignal.any([this.lifetime.signal, request.signal]), request.progress) as D;
  }

  /**
   * A database read for the panel rather than for one request: ends with the panel only. For a read whose answer
   * several requests share (the conversation view's branch tree): a cancelled request must not fail the others.
   */
  protected panelScoped<D>(db: D): D {
    return db instanceof WorkerSessionDatabase ? (db.withSignal(this.lifetime.signal) as D) : db;
  }

  /** Sends the page a message; public, so a feature answering the page's request can stream to it (a run's events). */
  post(message: EnvelopeMessage | Notification): void {
    void this.panel.webview.postMessage(message);
  }

  /** Every request gets one response: its result, or the message of what went wrong (describeError). */
  private async receive(m: unknown): Promise<void> {
    if (!isWebviewMessage(m)) return; // messages come from a frame: ignore anything malformed
    if (m.kind === 'link/open') return this.openLink(m.url);
    const controller = new AbortController();
    if (this.latestWins.has(m.method)) {
      this.latest.get(m.method)?.abort();
      this.latest.set(m.method, controller);
    }
    const progress = (done: number, total: number): void => {
      if (!this.lifetime.signal.aborted && !controller.signal.aborted) this.post({ kind: 'progress', id: m.id, done, total });
    };
    try {
      const result = await this.request.run({ signal: controller.signal, progress }, () => this.dispatch(m.method, m.params));
      if (!this.lifetime.signal.aborted) this.post({ kind: 'response', id: m.id, ok: true, result });
    } catch (err) {
      // A superseded request's page ignores its answer (it asked again since); it still gets one, as every request does.
      if (!this.lifetime.signal.aborted) this.post({ kind: 'response', id: m.id, ok: false, error: describeError(err) });
    } finally {
      if (this.latest.get(m.method) === controller) this.latest.delete(m.method);
    }
  }

  dispose(): void {
    this.lifetime.abort();
    for (const d of this.subscriptions) d.dispose();
    this.subscriptions.length = 0;
    this.notices.dispose();
    this.disposed.fire();
    this.disposed.dispose();
  }
}
