/**
 * The one command table: every command the extension contributes, each with its title, the checks its arguments go
 * through and its handler. Each feature folder contributes its part (`…Commands(services)` returning a slice of the
 * table); `activate` registers the whole table once. A command in `CommandId` without a handler fails to compile
 * (`CommandTable` needs every key); package.json and `CommandId` are held to each other by test/unit/manifest.test.ts.
 */
import * as vscode from 'vscode';
import { CommandId, type CommandIdValue } from './contributions';
import { describeError, UserFacingError } from './userError';
import { announceFailure } from './outcomes';
import { showErrorNotice } from './notices';

/** The key of a command in `CommandId` (`branchFromTurn` for `agentSessions.branchFromTurn`). */
export type CommandName = keyof typeof CommandId;

/**
 * Turns one argument as a command receives it (menus, keybindings, tests and other extensions pass anything) into
 * the type its handler declares, or throws a `UserFacingError` that names the command (`title`).
 */
export type ArgParser<T> = (value: unknown, title: string) => T;

type ArgsOf<P extends readonly ArgParser<unknown>[]> = { -readonly [I in keyof P]: P[I] extends ArgParser<infer T> ? T : never };

/** A registered command: its title (for messages) and the handler, called with the raw arguments. */
export interface CommandEntry {
  readonly title: string;
  run(args: readonly unknown[]): unknown;
}

/** Every command, by name: a missing one is a compile error where the table is assembled. */
export type CommandTable = { readonly [K in CommandName]: CommandEntry };

/** The part of the table one feature contributes. */
export type CommandsOf<K extends CommandName> = Pick<CommandTable, K>;

/**
 * A command whose handler receives its arguments already checked: `params[i]` checks argument i, and the handler's
 * parameter types are the parsers' results, so no handler sees an unchecked `unknown`.
 */
export function command<const P extends readonly ArgParser<unknown>[]>(
  title: string,
  params: P,
  handler: (...args: ArgsOf<P>) => unknown,
): CommandEntry {
  return {
    title,
    run: (args) => handler(...(params.map((parse, i) => parse(args[i], title)) as ArgsOf<P>)),
  };
}

/** The last error a command reported, with its command id (read by the integration tests through the API). */
export interface CommandFailure {
  command: CommandIdValue;
  message: string;
  error: unknown;
}

const failures = new vscode.EventEmitter<CommandFailure>();
/** Fires whenever a command fails and its notification is shown. */
export const onDidFailCommand = failures.event;

/**
 * Shows a command's failure as one notification and reports it to `onDidFailCommand`: for the table's commands, and
 * for a feature a view calls directly instead of through its command (the same failure, told the same way).
 */
export function reportFailure(command: CommandIdValue, err: unknown): void {
  const message = describeError(err);
  failures.fire({ command, message, error: err });
  announceFailure(message);
  const remedy = err instanceof UserFacingError ? err.remedy : undefined;
  if (!remedy) return void showErrorNotice(message);
  void showErrorNotice(message, remedy.title).then((chosen) => {
    if (chosen === remedy.title) void vscode.commands.executeCommand(remedy.command);
  });
}

/**
 * Runs a feature a view asked for directly (not through its command), reporting a failure as `command` would;
 * undefined when it failed. The view's request then answers with what happened rather than an error it would show too.
 */
export async function reported<T>(command: CommandIdValue, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    reportFailure(command, err);
    return undefined;
  }
}

/**
 * Registers every command of the table with uniform error handling: any failure (a refused argument included)
 * becomes one notification with its reason instead of an unhandled rejection. Not rethrown, so VS Code does not add
 * a second, less helpful notification; `onDidFailCommand` reports it to whoever needs to know.
 */
export function registerCommandTable(context: vscode.ExtensionContext, table: CommandTable): void {
  for (const name of Object.keys(CommandId) as CommandName[]) {
    const id = CommandId[name];
    const entry = table[name];
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await entry.run(args);
        } catch (err) {
          reportFailure(id, err);
          return undefined;
        }
      }),
    );
  }
}
