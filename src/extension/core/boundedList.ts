/** How many entries the extension's in-memory records (run log lines, command failures) keep: the newest. */
export const KEEP_NEWEST = 200;

/** Appends `item` and drops the oldest entries beyond `max`, so a record kept for a whole session stays small. */
export function pushBounded<T>(list: T[], item: T, max = KEEP_NEWEST): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}
