/** Costs on the conversation view's tables: the host prices usage (it knows the session's pricing model), the view shows it. */
import { costOf, type ModelPrice, type PriceTable } from '../../shared/pricing';
import type { TablesView } from '../../shared/protocol/conversationViews';
import type { SessionReader } from '../../store';

/** The pricing of a session as `SessionPricing.pricingFor` gives it (no vscode here, so this is unit-tested). */
export interface TablePricing {
  model: string | null;
  price: ModelPrice | null;
  table: PriceTable;
}

/**
 * The tables with a cost on every row of the page and on the totals (the scope's, summed by SQLite: cost is linear in
 * the counts, so the totals' cost is every row's cost summed, not only the page's), and how they were priced.
 */
export function withCosts(view: TablesView, pricing: TablePricing): TablesView {
  const { price } = pricing;
  const u = view.usage;
  return {
    ...view,
    usage: {
      ...u,
      rows: u.rows.map((r) => ({ ...r, cost: costOf(r, price) })),
      totals: { ...u.totals, cost: costOf(u.totals, price) },
    },
    pricing: { model: pricing.model, known: price !== null, date: pricing.table.date, source: pricing.table.source },
  };
}

/** The cost of a branch's own usage rows or (null) the whole session's, for the tree's tooltips; null: no price or no rows. */
export async function scopeCost(
  db: SessionReader,
  sessionId: string,
  branchId: string | null,
  price: ModelPrice | null,
): Promise<number | null> {
  if (!price) return null;
  const page = await db.getUsagePage(sessionId, branchId, { sort: 'turn', descending: false, offset: 0, limit: 1 });
  return page.rowCount === 0 ? null : costOf(page.totals, price);
}
