/**
 * Branch-name validation shared by the tree's input box and the conversation view, so both reject the same names
 * before anything is written. Returns the problem, or undefined when the name is acceptable.
 */
export function branchNameProblem(name: string, usedIds: ReadonlySet<string>): string | undefined {
  if (name.trim() === '') return 'A branch name cannot be empty.';
  // The store keeps such names as given, but deleting trims them, so they could never be deleted by name.
  if (name !== name.trim()) return 'A branch name cannot start or end with spaces.';
  if (name === 'main') return "'main' is the session's first branch; choose another name.";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'A branch name cannot contain control characters.';
  if (Array.from(name).length > 200) return 'A branch name can be at most 200 characters long.';
  if (usedIds.has(name)) return `'${name}' has already been used in this session (branch names are never reused).`;
  return undefined;
}
