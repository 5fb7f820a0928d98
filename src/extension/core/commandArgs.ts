/**
 * Arguments of commands: the checks of the command table (`ArgParser`s for what menus, tests and keybindings pass),
 * and what the user types when an argument is absent.
 */
import * as vscode from 'vscode';
import { asNode, type TreeNode } from './treeNodes';
import type { ArgParser } from './commandTable';
import { UserFacingError } from './userError';

/** A command run with an argument it cannot use (a stale menu, a wrong keybinding). */
export function badArgument(command: string, expected: string): never {
  throw new UserFacingError(vscode.l10n.t('{0} needs {1}; run it from the Agent Sessions view.', command, expected));
}

/** The text a caller passed (tests, keybindings, other extensions), or else what the user types; undefined if cancelled. */
export async function argOrInput(arg: string | undefined, options: vscode.InputBoxOptions): Promise<string | undefined> {
  return arg ?? vscode.window.showInputBox(options);
}

type NodeOf<K extends TreeNode['kind']> = Extract<TreeNode, { kind: K }>;

/** The argument parsers commands declare (core/commandTable.ts `command`). */
export const arg = {
  /** A tree node of one of `kinds`; anything else is refused, naming `expected` ("a turn"). */
  node:
    <K extends TreeNode['kind']>(expected: () => string, ...kinds: K[]): ArgParser<NodeOf<K>> =>
    (value, title) =>
      asNode(value, ...kinds) ?? badArgument(title, expected()),
  /** A tree node of one of `kinds`, or undefined when nothing was passed (the palette); anything else is refused. */
  optionalNode:
    <K extends TreeNode['kind']>(expected: () => string, ...kinds: K[]): ArgParser<NodeOf<K> | undefined> =>
    (value, title) =>
      value === undefined ? undefined : (asNode(value, ...kinds) ?? badArgument(title, expected())),
  /** A string a caller passed; anything else counts as not passed (the handler then asks). */
  text: ((value) => (typeof value === 'string' ? value : undefined)) as ArgParser<string | undefined>,
  /** `true` only when a caller passed `true` (a confirmation given in advance by a test or another command). */
  flag: ((value) => value === true) as ArgParser<boolean>,
  /** An argument whose handler accepts several shapes and checks it itself. */
  any: ((value) => value) as ArgParser<unknown>,
};
