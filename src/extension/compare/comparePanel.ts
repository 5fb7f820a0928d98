import { basename } from 'node:path';
import * as vscode from 'vscode';
import { MAX_COMPARE_COLUMNS, type CompareRequests } from '../../shared/protocol/compare';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import { priceOf } from '../../shared/pricing';
import { isWebviewMessage, type HostMessage } from '../../shared/protocol/conversation';
import { ChangeNotices } from '../conversation/changeNotices';
import { CompareData, type ColumnSource } from './compareData';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { SessionPricing } from '../pricing/sessionPricing';
import { describeError, UserFacingError } from '../core/userError';
import { dispatchRequest, type HandlersOf, type ParamSchemas } from '../conversation/requestChecks';
import { webviewHtml } from '../core/webviewHtml';
import { z } from 'zod';

export const COMPARE_VIEW_TYPE = 'agentSessions.compare';

const int = z.number({ error: 'must be an integer' }).refine(Number.isInteger, { error: 'must be an integer' });
const compareParams: ParamSchemas<CompareRequests> = {
  'compare/get': z.object({}).transform((): Record<string, never> => ({})),
  'compare/summary': z.object({}).transform((): Record<string, never> => ({})),
  'compare/rows': z.object({ offset: int, limit: int }),
  'compare/openTurn': z.object({ column: int, turn: int }),
  'compare/pickBranch': z.object({ column: int }),
};

/** What a compare panel asks of the rest of the extension. */
export interface CompareHost {
  registry: DatabaseRegistry;
  pricing: SessionPricing;
  extensionUri: vscode.Uri;
  /** Opens a branch's turn in the conversation view. */
  openTurn(target: CompareTarget, turn: number): Promise<void>;
  /** Asks the user for a branch to put in place of `current` (undefined: dismissed). */
  pickBranch(current: CompareTarget): Promise<CompareTarget | undefined>;
}

/** The title of a comparison: its branches, with the session when they are of different ones. */
export function compareTitle(targets: readonly CompareTarget[]): string {
  const oneSession = targets.every((t) => t.dbPath === targets[0]?.dbPath && t.sessionId === targets[0]?.sessionId);
  const names = targets.map((t) => t.label ?? (oneSession ? t.branchId : `${t.sessionId}/${t.branchId}`));
  return vscode.l10n.t('Compare {0}', names.join(' ↔ '));
}

/**
 * One compare view: two to five branches side by side. The host owns the comparison (`CompareData`) and the view
 * asks for its summary and for rows a page at a time; when a column's database changes, the panel drops what it read
 * and sends a change notice, and the view asks again.
 */
export class ComparePanel implements vscode.Disposable {
  private ready = false;
  private readonly notices = new ChangeNotices((n) => this.post({ kind: 'session/didChange', ...n }));
  private readonly subscriptions: vscode.Disposable[] = [];
  readonly data: CompareData;
  /** Resolves when the view has asked for the comparison (tests wait for it). */
  readonly whenReady: Promise<void>;
  private markReady: () => void = () => undefined;
  /** Milliseconds from opening the panel to the view's first rows drawn (reported by the view; for the benchmark). */
  firstRowsMs: number | undefined;
  private readonly opened = performance.now();

  constructor(
    readonly panel: vscode.WebviewPanel,
    targets: CompareTarget[],
    private readonly host: CompareHost,
    private readonly onDispose: () => void,
  ) {
    this.whenReady = new Promise((resolve) => (this.markReady = resolve));
    this.data = new CompareData(targets, (t) => this.source(t));
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(host.extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(host.extensionUri, 'media')],
    };
    panel.iconPath = vscode.Uri.joinPath(host.extensionUri, 'media', 'sessions.svg');
    panel.title = compareTitle(targets);
    panel.webview.html = webviewHtml(panel.webview, host.extensionUri, {
      title: panel.title,
      script: 'dist/webview/compare.js',
      styles: ['dist/webview/style.css', 'dist/webview/compare-style.css'],
    });
    this.subscriptions.push(
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
      host.registry.onDidChange((change) => {
        const touches = change.kind === 'list' || this.data.columns.some((t) => 'path' in change && change.path === t.dbPath);
        if (!touches || change.kind === 'current-branch') return;
        this.data.invalidate();
        if (this.ready) this.notices.note(['turns', 'branches', 'usage']);
      }),
      host.pricing.onDidChange(() => {
        this.data.invalidate();
        if (this.ready) this.notices.note(['usage']);
      }),
    );
  }

  get targets(): readonly CompareTarget[] {
    return this.data.columns;
  }

  private source(t: CompareTarget): ColumnSource {
    const entry = this.host.registry.get(t.dbPath);
    if (!entry) return { problem: vscode.l10n.t('{0} is not open.', t.dbPath) };
    if (!entry.db) return { problem: entry.problem ?? vscode.l10n.t('The database cannot be read.') };
    // A retry's column is priced at the model that ran it; any other at the session's pricing model.
    const session = this.host.pricing.pricingFor(t);
    const pricing = t.model ? { model: t.model, price: priceOf(session.table, t.model) } : { model: session.model, price: session.price };
    return { reader: entry.db, dbName: entry.remote ? t.dbPath : basename(t.dbPath), pricing };
  }

  private post(message: HostMessage): void {
    void this.panel.webview.postMessage(message);
  }

  private async receive(m: unknown): Promise<void> {
    if (!isWebviewMessage(m) || m.kind !== 'request') return;
    try {
      const result = await dispatchRequest(compareParams, this.handlers, m.method, m.params);
      this.post({ kind: 'response', id: m.id, ok: true, result });
    } catch (err) {
      this.post({ kind: 'response', id: m.id, ok: false, error: describeError(err) });
    }
  }

  private column(index: number): CompareTarget {
    const t = this.data.columns[index];
    if (!t) throw new UserFacingError(vscode.l10n.t('There is no column {0}.', index + 1));
    return t;
  }

  private readonly handlers: HandlersOf<CompareRequests> = {
    'compare/get': async () => {
      const view = await this.data.view();
      this.ready = true;
      this.markReady();
      return view;
    },
    'compare/summary': () => this.data.summary(),
    'compare/rows': async (p) => {
      const rows = await this.data.rows(p.offset, p.limit);
      this.firstRowsMs ??= performance.now() - this.opened;
      return rows;
    },
    'compare/openTurn': async (p) => {
      await this.host.openTurn(this.column(p.column), p.turn);
      return null;
    },
    'compare/pickBranch': async (p) => {
      const picked = await this.host.pickBranch(this.column(p.column));
      if (!picked) return { changed: false };
      this.data.setColumn(p.column, picked);
      this.panel.title = compareTitle(this.data.columns);
      return { changed: true };
    },
  };

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
    this.subscriptions.length = 0;
    this.notices.dispose();
    this.onDispose();
  }
}

/** The open compare views. A comparison of the same branches is shown again, not opened twice. */
export class ComparePanels implements vscode.Disposable {
  private readonly panels = new Set<ComparePanel>();

  constructor(private readonly host: CompareHost) {}

  open(targets: CompareTarget[]): ComparePanel {
    if (targets.length < 2) throw new UserFacingError(vscode.l10n.t('A comparison needs two branches or more.'));
    if (targets.length > MAX_COMPARE_COLUMNS)
      throw new UserFacingError(vscode.l10n.t('At most {0} branches can be compared at once.', MAX_COMPARE_COLUMNS));
    // Matched on each panel's branches as they are now: a column swapped in a panel changes what it compares.
    const key = comparisonKey(targets);
    const existing = [...this.panels].find((p) => comparisonKey(p.targets) === key);
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(COMPARE_VIEW_TYPE, compareTitle(targets), vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: false,
    });
    const p: ComparePanel = new ComparePanel(panel, targets, this.host, () => this.panels.delete(p));
    this.panels.add(p);
    return p;
  }

  /** Every open comparison (tests and the benchmark look at them). */
  all(): ComparePanel[] {
    return [...this.panels];
  }

  dispose(): void {
    for (const p of this.panels) p.panel.dispose();
  }
}

function comparisonKey(targets: readonly CompareTarget[]): string {
  return JSON.stringify(targets.map((t) => [t.dbPath, t.sessionId, t.branchId]));
}
