import { basename } from 'node:path';
import * as vscode from 'vscode';
import { MAX_COMPARE_COLUMNS, type CompareRequests } from '../../shared/protocol/compare';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import { priceOf } from '../../shared/pricing';
import type { ChangeKind } from '../../shared/protocol/envelope';
import { LayerReader } from './layerColumn';
import { CompareData, type ColumnSource, type LatencySource, type ReplayCountsSource } from './compareData';
import type { DatabaseChange, DatabaseRegistry } from '../databases/databaseRegistry';
import type { SessionPricing } from '../pricing/sessionPricing';
import { UserFacingError } from '../core/userError';
import type { ReviewChanges, TraceChanges } from '../core/panelHost';
import type { WorkerReviewStore } from '../../store/worker/storeClient';
import type { ItemEntry } from '../../store';
import { compareVerdicts, setCompareVerdict } from '../reviews/compareVerdicts';
import { dispatchRequest, type HandlersOf } from '../core/requestDispatch';
import { PanelHost } from '../core/panelHost';
import { PanelRegistry } from '../core/panelRegistry';

export const COMPARE_VIEW_TYPE = 'agentSessions.compare';

/** What a compare panel asks of the rest of the extension. */
export interface CompareHost {
  registry: DatabaseRegistry;
  pricing: SessionPricing;
  extensionUri: vscode.Uri;
  /** Opens a branch's turn in the conversation view. */
  openTurn(target: CompareTarget, turn: number): Promise<void>;
  /** Asks the user for a branch to put in place of `current` (undefined: dismissed). */
  pickBranch(current: CompareTarget): Promise<CompareTarget | undefined>;
  /** Turns' latency from the trace store, and its changes (absent: the columns show no latency). */
  latency?: LatencySource;
  traces?: TraceChanges;
  /** The review store of a session store, and the review data's changes (absent: no verdicts). */
  reviewStore?: (target: CompareTarget) => Promise<WorkerReviewStore>;
  reviewChanged?: (sessionId: string) => void;
  reviews?: ReviewChanges;
  /** Each column's replay counts (docs/replay.md), and their changes (absent: no counts). */
  replay?: ReplayCountsSource & { onDidChange: vscode.Event<string> };
  /** A history guard layer's entries (a layer column, `CompareTarget.layerId`; absent: no layer columns). */
  layerEntries?: (layerId: number) => Promise<{ entries: readonly ItemEntry[] }>;
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
export class ComparePanel extends PanelHost {
  readonly data: CompareData;
  /** Milliseconds from opening the panel to the view's first rows drawn (reported by the view; for the benchmark). */
  firstRowsMs: number | undefined;
  private readonly opened = performance.now();

  constructor(
    panel: vscode.WebviewPanel,
    targets: CompareTarget[],
    private readonly host: CompareHost,
  ) {
    super(
      panel,
      {
        title: compareTitle(targets),
        script: 'dist/webview/compare.js',
        styles: ['dist/webview/style.css', 'dist/webview/compare-style.css'],
      },
      host.extensionUri,
    );
    this.data = new CompareData(targets, (t) => this.source(t), host.latency, host.replay);
    this.listen(host.registry.onDidChange, (change) => this.changesOf(change));
    this.listen(host.pricing.onDidChange, () => this.pricingChangesOf());
    if (host.traces) this.listen(host.traces.onDidChange, (sessionId) => this.traceChangesOf(sessionId));
    if (host.reviews) this.listen(host.reviews.onDidChange, (sessionId) => this.reviewChangesOf(sessionId));
    if (host.replay) this.listen(host.replay.onDidChange, (sessionId) => this.replayChangesOf(sessionId));
  }

  protected async dispatch(method: string, params: unknown): Promise<unknown> {
    // The checks are zod's: loaded with the first request of a compare view, not at activation.
    const { compareParams } = await import('./compareChecks');
    return dispatchRequest(compareParams, this.handlers, method, params, undefined);
  }

  /** Any write to a column's database, or the list of databases: the comparison is read again. */
  private changesOf(change: DatabaseChange): readonly ChangeKind[] {
    const touches = change.kind === 'list' || this.data.columns.some((t) => 'path' in change && change.path === t.dbPath);
    if (!touches || change.kind === 'current-branch') return [];
    this.data.invalidate();
    return ['turns', 'branches', 'usage'];
  }

  /** Any pricing change may touch a column (a retry's column is priced at its own model): the costs are read again. */
  private pricingChangesOf(): readonly ChangeKind[] {
    this.data.invalidate();
    return ['usage'];
  }

  /** A column's session's traces changed: its latency is read again. */
  private traceChangesOf(sessionId: string | undefined): readonly ChangeKind[] {
    if (sessionId !== undefined && !this.data.columns.some((t) => t.sessionId === sessionId)) return [];
    this.data.invalidate();
    return ['traces'];
  }

  /** A column's session's reviews changed (this window's verdicts): the view reads the verdicts again. */
  private reviewChangesOf(sessionId: string): readonly ChangeKind[] {
    return this.data.columns.some((t) => t.sessionId === sessionId) ? ['reviews'] : [];
  }

  /** A run recorded marks in a column's session: the columns' replay counts are read again. */
  private replayChangesOf(sessionId: string): readonly ChangeKind[] {
    if (!this.data.columns.some((t) => t.sessionId === sessionId)) return [];
    this.data.invalidate();
    return ['replay'];
  }

  private async verdicts() {
    const store = this.host.reviewStore;
    const first = this.data.columns[0];
    if (!store || !first) return { available: false, reason: vscode.l10n.t('Verdicts are not available here.'), verdicts: [], tallies: [] };
    const db = this.host.registry.get(first.dbPath)?.db;
    return compareVerdicts(this.data.columns, await store(first), db ? this.scoped(db) : undefined);
  }

  get targets(): readonly CompareTarget[] {
    return this.data.columns;
  }

  private source(t: CompareTarget): ColumnSource {
    if (t.layerId !== undefined) {
      const { layerEntries } = this.host;
      if (!layerEntries) return { problem: vscode.l10n.t('History layers are not available here.') };
      const layerId = t.layerId;
      // The guard keeps items, not usage: a layer column has no cost.
      return {
        reader: new LayerReader(t.branchId, () => layerEntries(layerId)),
        dbName: basename(t.dbPath),
        pricing: { model: null, price: null },
      };
    }
    const entry = this.host.registry.get(t.dbPath);
    if (!entry) return { problem: vscode.l10n.t('{0} is not open.', t.dbPath) };
    if (!entry.db) return { problem: entry.problem ?? vscode.l10n.t('The database cannot be read.') };
    // A retry's own turns are priced at the model that ran them; any other column's at the session's pricing model.
    // The turns a retry shares with its parent ran before it, on the parent: those stay at the session's (`session`).
    const session = this.host.pricing.pricingFor(t);
    const sessionPricing = { model: session.model, price: session.price };
    const pricing = t.unpriced
      ? { model: null, price: null, session: sessionPricing }
      : t.model
        ? { model: t.model, price: priceOf(session.table, t.model), session: sessionPricing }
        : sessionPricing;
    return { reader: this.scoped(entry.db), dbName: entry.remote ? t.dbPath : basename(t.dbPath), pricing };
  }

  private column(index: number): CompareTarget {
    const t = this.data.columns[index];
    if (!t) throw new UserFacingError(vscode.l10n.t('There is no column {0}.', index + 1));
    return t;
  }

  private readonly handlers: HandlersOf<CompareRequests> = {
    'compare/get': async () => {
      const view = await this.data.view();
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
    'compare/verdicts': () => this.verdicts(),
    'compare/verdict': async (p) => {
      const first = this.column(0);
      if (!this.host.reviewStore) throw new UserFacingError(vscode.l10n.t('Verdicts are not available here.'));
      const entry = this.host.registry.get(first.dbPath);
      if (!entry?.db) throw new UserFacingError(entry?.problem ?? vscode.l10n.t('The database cannot be read.'));
      const store = await this.host.reviewStore(first);
      await setCompareVerdict(
        this.data.columns,
        p.column,
        p.turn,
        p.outcome,
        p.reason,
        this.scoped(entry.db),
        store,
        basename(first.dbPath),
      );
      this.host.reviewChanged?.(first.sessionId);
      return this.verdicts();
    },
    'compare/pickBranch': async (p) => {
      const picked = await this.host.pickBranch(this.column(p.column));
      if (!picked) return { changed: false };
      this.data.setColumn(p.column, picked);
      this.panel.title = compareTitle(this.data.columns);
      return { changed: true };
    },
  };
}

/** The open compare views. A comparison of the same branches is shown again, not opened twice. */
export class ComparePanels extends PanelRegistry<ComparePanel> {
  constructor(private readonly host: CompareHost) {
    super(COMPARE_VIEW_TYPE, vscode.ViewColumn.Beside);
  }

  /** Matched on each panel's branches as they are now: a column swapped in a panel changes what it compares. */
  protected keyOf(panel: ComparePanel): string {
    return comparisonKey(panel.targets);
  }

  open(targets: CompareTarget[]): ComparePanel {
    if (targets.length < 2) throw new UserFacingError(vscode.l10n.t('A comparison needs two branches or more.'));
    if (targets.length > MAX_COMPARE_COLUMNS)
      throw new UserFacingError(vscode.l10n.t('At most {0} branches can be compared at once.', MAX_COMPARE_COLUMNS));
    return this.showOrCreate(
      comparisonKey(targets),
      compareTitle(targets),
      (panel) => new ComparePanel(panel, targets, this.host),
      (existing) => existing.panel.reveal(),
    );
  }
}

function comparisonKey(targets: readonly CompareTarget[]): string {
  return JSON.stringify(targets.map((t) => [t.dbPath, t.sessionId, t.branchId, t.layerId ?? null]));
}
