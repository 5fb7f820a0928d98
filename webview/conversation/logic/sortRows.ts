/**
 * Sorts table rows by one column; nulls last in both directions, ties keep their order. Numbers compare as numbers,
 * lists (the turns a tool ran in) by their first value, then their next, a shorter list first when one begins the
 * other; anything else as text.
 */
export type SortDirection = 'asc' | 'desc';

export function sortRows<T>(rows: readonly T[], key: keyof T, direction: SortDirection): T[] {
  const sign = direction === 'asc' ? 1 : -1;
  return rows
    .map((row, index) => ({ row, index }))
    .sort((a, b) => {
      const x = a.row[key] as unknown;
      const y = b.row[key] as unknown;
      if (x === y) return a.index - b.index;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      const c = compareValues(x, y);
      return c === 0 ? a.index - b.index : c * sign;
    })
    .map((e) => e.row);
}

function compareValues(x: unknown, y: unknown): number {
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (Array.isArray(x) && Array.isArray(y)) {
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const c = compareValues(x[i], y[i]);
      if (c !== 0) return c;
    }
    return x.length - y.length;
  }
  return String(x).localeCompare(String(y));
}

/** A table's order as the user chose it: the column, and which way. */
export interface SortChoice<K> {
  key: K;
  direction: SortDirection;
}

/**
 * The order the user chose for a table sorted in the view (the Tools table), kept by the page across the table's
 * rebuilds: a refresh (another process wrote, the scope changed) draws the table again from new rows, and it would
 * otherwise come back in the host's order. Choosing a column sorts by it ascending; choosing it again reverses.
 */
export class SortMemory<K> {
  choice: SortChoice<K> | undefined;

  choose(key: K): SortChoice<K> {
    const c = this.choice;
    this.choice = { key, direction: c?.key === key && c.direction === 'asc' ? 'desc' : 'asc' };
    return this.choice;
  }
}
