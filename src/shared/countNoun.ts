/**
 * A count's noun as English says it: `countNoun(1, 'turn')` is "turn", any other count (0 too) "turns". Lines a person
 * or a model reads say "1 turn", not "1 turns"; callers write the number themselves, formatted as they need it.
 */
export function countNoun(count: number, one: string, many = `${one}s`): string {
  return count === 1 ? one : many;
}

/** The count and its noun: `counted(1, 'turn')` is "1 turn", `counted(3, 'branch', 'branches')` "3 branches". */
export function counted(count: number, one: string, many = `${one}s`): string {
  return `${count} ${countNoun(count, one, many)}`;
}
