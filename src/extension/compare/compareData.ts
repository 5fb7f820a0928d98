/**
 * Builds the compare view's models from the stores' reads (no vscode here). A comparison holds its columns' branch
 * trees and where the rows start until something changes (`invalidate`); rows are read a page at a time, each row
 * one turn's items per column, so the first rows of two 10,000-turn branches cost a handful of index seeks.
 */
import { basename } from 'node:path';
import type { BranchNode, ItemEntry, SessionReader, UsageRow } from '../../store';
import { compareRow, rowCount, rowTurn, sharedTurnsByFork, type SideFacts } from '../../shared/compare/alignment';
import { sameTurnContent, turnContent, type TurnContent } from '../../shared/compare/turnContent';
import { MAX_COMPARE_ROWS } from '../../shared/protocol/compare';
import type { BranchLatencyView, TurnLatencyView } from '../../shared/protocol/latencyViews';
import type { ReplayCountsView } from '../../shared/protocol/replay';
import type { RanTurn } from '../traces/turnLatency';
import type {
  CompareColumnView,
  CompareRowsView,
  CompareSummaryView,
  CompareTarget,
  CompareTotalsView,
  CompareUsage,
  CompareView,
  SharedBy,
} from '../../shared/protocol/compareViews';
import { costOf, type ModelPrice } from '../../shared/pricing';
import { sharedTurnRanges, turnOrigin } from '../../shared/turnOrigin';
import { describeError } from '../core/userError';
import * as l10n from '@vscode/l10n';

/** A model and its price (null: no model, or no price for it). */
export interface ColumnPricing {
  model: string | null;
  price: ModelPrice | null;
}

/**
 * What a column reads from: its store, or why it cannot. `pricing` prices the column's own turns (a retry's at the
 * model that ran it); `pricing.session` is the session's pricing, for the turns the column shares with a branch that is
 * no column of the comparison (those ran on the parent, not on the retry's model). Absent: `pricing` is the session's.
 */
export type ColumnSource =
  { reader: SessionReader; dbName: string; pricing: ColumnPricing & { session?: ColumnPricing } } | { problem: string };

/**
 * Turns' latency from the trace store (src/extension/traces/turnLatency.ts), when the host has one; a column whose
 * latency cannot be read shows none, never fails.
 */
export interface LatencySource {
  turns(sessionId: string, turns: RanTurn[], reader: SessionReader): Promise<TurnLatencyView[]>;
  branch(sessionId: string, branchId: string, tree: readonly BranchNode[], reader: SessionReader): Promise<BranchLatencyView>;
}

/**
 * The replay marks of a column's branch (src/extension/replay/replayService.ts): the counts of the newest run
 * recorded on it; a column whose marks cannot be read shows none, never fails.
 */
export interface ReplayCountsSource {
  counts(dbPath: string, sessionId: string, branchId: string): Promise<ReplayCountsView | undefined>;
}

/** Turns compared per step while looking for the end of the content two sessions share. */
const CONTENT_STEP = 50;

interface Column {
  target: CompareTarget;
  source: ColumnSource;
  tree: readonly BranchNode[];
  turns: number;
  /**
   * The pricing of the turns a branch ran, as this column sees them: its own branch's at the column's pricing, a
   * shared turn's at the pricing of the column showing the branch that ran it, else at the session's.
   */
  pricingOf: (originBranchId: string) => ColumnPricing;
}

interface Layout {
  columns: Column[];
  view: CompareView;
}

function usageOf(row: Pick<UsageRow, keyof CompareUsage>): CompareUsage {
  return {
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    totalTokens: row.totalTokens,
    cachedTokens: row.cachedTokens,
    reasoningTokens: row.reasoningTokens,
  };
}

const toTurnItems = (entries: readonly ItemEntry[]) =>
  entries.map((e) =>
    e.corrupt ? { corrupt: true as const, createdAt: e.createdAt } : { corrupt: false as const, item: e.item, createdAt: e.createdAt },
  );

export class CompareData {
  private layout: Promise<Layout> | undefined;
  private summaries: { layout: Layout; result: Promise<(CompareTotalsView | null)[]> } | undefined;

  constructor(
    private targets: CompareTarget[],
    private readonly sourceOf: (target: CompareTarget) => ColumnSource,
    private readonly latency?: LatencySource,
    private readonly replay?: ReplayCountsSource,
  ) {}

  get columns(): readonly CompareTarget[] {
    return this.targets;
  }

  /** Forgets what was read: the next request reads the trees again (after a change notice). */
  invalidate(): void {
    this.layout = undefined;
    this.summaries = undefined;
  }

  /** Replaces one column's branch. */
  setColumn(index: number, target: CompareTarget): void {
    this.targets = this.targets.map((t, i) => (i === index ? target : t));
    this.invalidate();
  }

  async view(): Promise<CompareView> {
    return (await this.read()).view;
  }

  private read(): Promise<Layout> {
    const layout = (this.layout ??= this.build());
    // A failed read is not kept: the next request tries again.
    layout.catch(() => {
      if (this.layout === layout) this.layout = undefined;
    });
    return layout;
  }

  private async build(): Promise<Layout> {
    const trees = new Map<string, Promise<readonly BranchNode[]>>();
    const unpriced = (): ColumnPricing => ({ model: null, price: null });
    const found = await Promise.all(
      this.targets.map(async (target): Promise<Omit<Column, 'pricingOf'>> => {
        const source = this.sourceOf(target);
        if ('problem' in source) return { target, source, tree: [], turns: 0 };
        // A layer column has a tree of its own (its one branch), never the session's.
        const key = `${target.dbPath}\u0000${target.sessionId}\u0000${target.layerId ?? ''}`;
        let tree = trees.get(key);
        if (!tree) trees.set(key, (tree = Promise.resolve(source.reader.getBranchTree(target.sessionId))));
        try {
          const nodes = await tree;
          const node = nodes.find((b) => b.branchId === target.branchId);
          if (!node)
            return {
              target,
              source: { problem: l10n.t("Branch '{0}' is not in session '{1}' any more.", target.branchId, target.sessionId) },
              tree: [],
              turns: 0,
            };
          return { target, source, tree: nodes, turns: node.userTurns };
        } catch (err) {
          return { target, source: { problem: describeError(err) }, tree: [], turns: 0 };
        }
      }),
    );
    const columns: Column[] = found.map((c) => ({
      ...c,
      pricingOf: (origin) => ('problem' in c.source ? unpriced() : originPricing(found, c, origin)),
    }));
    const readable = columns.filter((c) => !('problem' in c.source));
    const sameSession =
      readable.length === columns.length &&
      // A layer shares no structure rows with its branch: its turns are aligned by content.
      columns.every((c) => c.target.layerId === undefined) &&
      columns.every((c) => c.target.dbPath === columns[0]!.target.dbPath && c.target.sessionId === columns[0]!.target.sessionId);
    let sharedTurns: number;
    let sharedBy: SharedBy;
    if (sameSession) {
      sharedTurns = sharedTurnsByFork(
        columns[0]!.tree,
        columns.map((c) => c.target.branchId),
        columns.map((c) => c.turns),
      );
      sharedBy = 'fork';
    } else {
      sharedTurns = readable.length === columns.length ? await this.sharedByContent(columns) : 0;
      sharedBy = 'content';
    }
    return {
      columns,
      view: {
        columns: columns.map(columnView),
        sharedTurns,
        sharedBy,
        rowCount: rowCount(
          sharedTurns,
          columns.map((c) => c.turns),
        ),
      },
    };
  }

  /** The first turns whose items are equal on every column (sessions that began as copies of one another). */
  private async sharedByContent(columns: Column[]): Promise<number> {
    const limit = Math.min(...columns.map((c) => c.turns));
    let shared = 0;
    while (shared < limit) {
      const to = Math.min(limit, shared + CONTENT_STEP);
      const turns = Array.from({ length: to - shared }, (_, i) => shared + 1 + i);
      const contents = await Promise.all(columns.map((c) => Promise.all(turns.map((t) => this.content(c, t)))));
      for (let i = 0; i < turns.length; i++) {
        const first = contents[0]![i]!;
        if (!contents.every((col) => sameTurnContent(first, col[i]!))) return shared;
        shared++;
      }
    }
    return shared;
  }

  private async content(c: Column, turn: number): Promise<TurnContent> {
    if ('problem' in c.source) throw new Error(c.source.problem);
    return turnContent(turn, toTurnItems(await c.source.reader.getTurnItems(c.target.sessionId, c.target.branchId, turn)));
  }

  /** Each column's usage, cost and tools; read once per layout (after the first rows, by the view). */
  async summary(): Promise<CompareSummaryView> {
    const layout = await this.read();
    if (this.summaries?.layout !== layout)
      this.summaries = { layout, result: Promise.all(layout.columns.map((c) => totals(c, this.latency, this.replay))) };
    const { result } = this.summaries;
    // A failed read is not kept: the next request reads again.
    result.catch(() => {
      if (this.summaries?.result === result) this.summaries = undefined;
    });
    return { columns: await result };
  }

  /** Rows `offset`… of the comparison. */
  async rows(offset: number, limit: number): Promise<CompareRowsView> {
    const { columns, view } = await this.read();
    const from = Math.max(0, offset);
    const to = Math.min(view.rowCount, from + Math.max(1, Math.min(limit, MAX_COMPARE_ROWS)));
    if (to <= from) return { rows: [] };
    const firstTurn = rowTurn(view.sharedTurns, from);
    const lastTurn = rowTurn(view.sharedTurns, to - 1);
    const perColumn = await Promise.all(columns.map((c) => this.columnSides(c, firstTurn, lastTurn)));
    const rows = [];
    for (let i = from; i < to; i++) {
      const turn = rowTurn(view.sharedTurns, i);
      rows.push(
        compareRow(
          i,
          turn,
          perColumn.map((sides) => sides.get(turn) ?? null),
        ),
      );
    }
    return { rows };
  }

  /** One column's turns `first`…`last` (those it has), with usage from the branch that ran each turn. */
  private async columnSides(c: Column, first: number, last: number): Promise<Map<number, SideFacts>> {
    const out = new Map<number, SideFacts>();
    if ('problem' in c.source || first > c.turns) return out;
    const { reader } = c.source;
    const end = Math.min(last, c.turns);
    const turns = Array.from({ length: end - first + 1 }, (_, i) => first + i);
    // A turn's usage row is on the branch that ran it (a shared turn's on an ancestor): one range read per branch.
    // The branch's own rows are read for every turn: a run on the branch can store a row for a copied turn, and that
    // row is the branch's usage for the turn (as the card, the Tokens tab and `usage --branch` count it).
    const own = c.target.branchId;
    const ranges = new Map<string, { from: number; to: number }>([[own, { from: first, to: end }]]);
    for (const t of turns) {
      const origin = turnOrigin(c.tree, c.target.branchId, t);
      const r = ranges.get(origin);
      ranges.set(origin, r ? { from: Math.min(r.from, t), to: Math.max(r.to, t) } : { from: t, to: t });
    }
    const ran = turns.map((t) => ({ branchId: turnOrigin(c.tree, c.target.branchId, t), turn: t }));
    const [contents, usageRows, latencies] = await Promise.all([
      Promise.all(turns.map((t) => this.content(c, t))),
      Promise.all([...ranges].map(async ([branch, r]) => reader.getTurnUsage(c.target.sessionId, branch, r.from, r.to))),
      // A layer's turns have no traces of their own (its items were stored by runs of its branch, now gone).
      this.latency && c.target.layerId === undefined ? this.latency.turns(c.target.sessionId, ran, reader).catch(() => []) : [],
    ]);
    const latencyByTurn = new Map(latencies.map((l) => [`${l.branchId}\u0000${l.turn}`, l]));
    const usageByTurn = new Map<string, UsageRow>();
    for (const row of usageRows.flat()) usageByTurn.set(`${row.branchId}\u0000${row.turn}`, row);
    for (const content of contents) {
      const origin = turnOrigin(c.tree, c.target.branchId, content.turn);
      const key = `${origin}\u0000${content.turn}`;
      const ownRow = usageByTurn.get(`${own}\u0000${content.turn}`);
      const row = ownRow ?? usageByTurn.get(key);
      const usage = row ? usageOf(row) : null;
      const latency = latencyByTurn.get(key);
      out.set(content.turn, {
        content,
        usage,
        // At the model that ran the turn, as the card prices it: a shared turn's is not the retry's model (a row of
        // the branch's own is priced as the branch's).
        cost: usage ? costOf(usage, c.pricingOf(ownRow ? own : origin).price) : null,
        latency: latency ? { ms: latency.ms, requests: latency.requests } : null,
      });
    }
    return out;
  }
}

/**
 * The pricing of the turns `origin` ran, seen from column `c`: the column's own for its branch; for a shared turn, the
 * pricing of a column of the same session showing `origin` (a retry of a retry shares the first retry's turns, which
 * ran on its model), else the session's: nothing else records which model ran a branch that is not a column.
 */
function originPricing(columns: readonly Omit<Column, 'pricingOf'>[], c: Omit<Column, 'pricingOf'>, origin: string): ColumnPricing {
  if ('problem' in c.source) return { model: null, price: null };
  const { session, ...own } = c.source.pricing;
  if (origin === c.target.branchId) return own;
  for (const other of columns) {
    if ('problem' in other.source || other.target.layerId !== undefined || other.target.branchId !== origin) continue;
    if (other.target.dbPath !== c.target.dbPath || other.target.sessionId !== c.target.sessionId) continue;
    const { session: _unused, ...its } = other.source.pricing;
    return its;
  }
  return session ?? own;
}

function samePrice(a: ModelPrice | null, b: ModelPrice | null): boolean {
  return a === b || (a !== null && b !== null && a.input === b.input && a.cachedInput === b.cachedInput && a.output === b.output);
}

/** `a` − `b` (the counts of rows in `a`'s scope and not in `b`'s, `b`'s scope inside `a`'s). */
function usageLess(a: CompareUsage, b: CompareUsage): CompareUsage {
  const less = (x: number | null, y: number | null) => (x === null ? null : x - (y ?? 0));
  return {
    inputTokens: less(a.inputTokens, b.inputTokens),
    outputTokens: less(a.outputTokens, b.outputTokens),
    totalTokens: less(a.totalTokens, b.totalTokens),
    cachedTokens: less(a.cachedTokens, b.cachedTokens),
    reasoningTokens: less(a.reasoningTokens, b.reasoningTokens),
  };
}

/**
 * What a branch's whole conversation cost with its turns priced at the models that ran them: its own rows at the
 * column's pricing, each shared range's rows at its origin's (`pricingOf`). One more page read for the own rows and
 * one per origin price that differs from the column's; none when every turn is priced alike. Null when a part with
 * rows has no price (the sum would hide it) or nothing has counts.
 */
async function branchCost(
  c: Column,
  reader: SessionReader,
  whole: { usage: CompareUsage; rowCount: number },
  shared: ReturnType<typeof sharedTurnRanges>,
): Promise<number | null> {
  const { sessionId, branchId } = c.target;
  const ownPrice = c.pricingOf(branchId).price;
  const groups: { price: ModelPrice | null; ranges: typeof shared }[] = [];
  for (const r of shared) {
    const price = c.pricingOf(r.originBranchId).price;
    const group = groups.find((g) => samePrice(g.price, price));
    if (group) group.ranges.push(r);
    else groups.push({ price, ranges: [r] });
  }
  if (groups.every((g) => samePrice(g.price, ownPrice))) return costOf(whole.usage, ownPrice);
  // A page with some shared ranges counts the own rows too (and drops a range's turn the branch has its own row
  // for): less the own rows, what is left is those ranges' part.
  const own = await reader.getUsagePage(sessionId, branchId, { limit: 1 });
  const ownUsage = usageOf(own.totals);
  const parts: { usage: CompareUsage; rows: number; price: ModelPrice | null }[] = [
    { usage: ownUsage, rows: own.rowCount, price: ownPrice },
  ];
  if (groups.length === 1)
    parts.push({ usage: usageLess(whole.usage, ownUsage), rows: whole.rowCount - own.rowCount, price: groups[0]!.price });
  else {
    const pages = await Promise.all(groups.map((g) => reader.getUsagePage(sessionId, branchId, { limit: 1, shared: g.ranges })));
    pages.forEach((p, i) =>
      parts.push({ usage: usageLess(usageOf(p.totals), ownUsage), rows: p.rowCount - own.rowCount, price: groups[i]!.price }),
    );
  }
  let cost: number | null = null;
  for (const part of parts) {
    if (part.rows <= 0) continue;
    const partCost = costOf(part.usage, part.price);
    if (partCost === null) {
      if (part.usage.inputTokens === null && part.usage.outputTokens === null) continue;
      return null;
    }
    cost = (cost ?? 0) + partCost;
  }
  return cost;
}

function columnView(c: Column): CompareColumnView {
  const node = c.tree.find((b) => b.branchId === c.target.branchId);
  return {
    dbName: 'problem' in c.source ? basename(c.target.dbPath) : c.source.dbName,
    sessionId: c.target.sessionId,
    branchId: c.target.branchId,
    label: c.target.label ?? null,
    turns: c.turns,
    turnsAtLeast: node?.userTurnsAtLeast === true,
    runMs: c.target.runMs ?? null,
    problem: 'problem' in c.source ? c.source.problem : null,
  };
}

/**
 * A column's totals: the usage of the branch's whole conversation (its own rows and its shared turns' rows on the
 * branches that ran them, as the Tokens table's branch scope sums them) and the tools it called.
 */
async function totals(
  c: Column,
  latencySource: LatencySource | undefined,
  replaySource: ReplayCountsSource | undefined,
): Promise<CompareTotalsView | null> {
  if ('problem' in c.source) return null;
  const { reader, pricing } = c.source;
  const { sessionId, branchId } = c.target;
  // A layer has no usage rows, traces or replay marks of its own: the branch's would not describe it.
  const layer = c.target.layerId !== undefined;
  const shared = sharedTurnRanges(c.tree, branchId);
  const [page, tools, latency, replay] = await Promise.all([
    reader.getUsagePage(sessionId, branchId, { limit: 1, shared }),
    reader.getToolTotals(sessionId, branchId),
    latencySource && !layer ? latencySource.branch(sessionId, branchId, c.tree, reader).catch(() => undefined) : undefined,
    replaySource && !layer ? replaySource.counts(c.target.dbPath, sessionId, branchId).catch(() => undefined) : undefined,
  ]);
  const usage = usageOf(page.totals);
  return {
    usage,
    cost: await branchCost(c, reader, { usage, rowCount: page.rowCount }, shared),
    pricingModel: pricing.model,
    tools: tools.map((t) => ({ name: t.toolName, calls: t.calls })).sort((a, b) => b.calls - a.calls),
    latency:
      latency && latency.p50Ms !== null && latency.p95Ms !== null
        ? { p50Ms: latency.p50Ms, p95Ms: latency.p95Ms, tracedTurns: latency.turns.length }
        : null,
    ...(replay ? { replay } : {}),
  };
}
