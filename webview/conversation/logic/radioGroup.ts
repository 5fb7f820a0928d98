/**
 * A row of buttons that work as radio buttons (the Tokens and Tools tabs' "This branch" / "Whole session"), as the
 * ARIA radio group pattern has them: the chosen one is checked (aria-checked, and drawn as the primary button) and is
 * the group's one stop for Tab; the arrow keys move to the next or previous one and choose it, wrapping around, Home
 * and End to the first and last. No DOM here (unit-tested without one).
 */

/** What one option of the group shows: whether it is checked, its place in the Tab order, its look. */
export interface RadioState {
  checked: boolean;
  tabIndex: 0 | -1;
  appearance: 'primary' | 'secondary';
}

/** The options' states when option `chosen` of `count` is chosen. */
export function radioStates(count: number, chosen: number): RadioState[] {
  return Array.from({ length: count }, (_, i) =>
    i === chosen ? { checked: true, tabIndex: 0, appearance: 'primary' } : { checked: false, tabIndex: -1, appearance: 'secondary' },
  );
}

/** The option a key moves to from option `index` of `count` (it is then chosen), or undefined for another key. */
export function radioKeyTarget(key: string, index: number, count: number): number | undefined {
  if (count === 0) return undefined;
  switch (key) {
    case 'ArrowRight':
    case 'ArrowDown':
      return (index + 1) % count;
    case 'ArrowLeft':
    case 'ArrowUp':
      return (index - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return undefined;
  }
}
