/** Arguments of commands: what menus, tests and keybindings pass, or else what the user types. */
import * as vscode from 'vscode';
import { UserFacingError } from './userError';

/** A command run with an argument it cannot use (a stale menu, a wrong keybinding). */
export function badArgument(command: string, expected: string): never {
  throw new UserFacingError(vscode.l10n.t('{0} needs {1}; run it from the Agent Sessions view.', command, expected));
}

/** The text a caller passed (tests, keybindings, other extensions), or else what the user types; undefined if cancelled. */
export async function argOrInput(arg: unknown, options: vscode.InputBoxOptions): Promise<string | undefined> {
  return typeof arg === 'string' ? arg : vscode.window.showInputBox(options);
}
