/** Sorts table rows by one column; nulls last in both directions, ties keep their order. */
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
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return c === 0 ? a.index - b.index : c * sign;
    })
    .map((e) => e.row);
}
