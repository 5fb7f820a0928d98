import * as vscode from 'vscode';
import type { CommandIdValue } from './contributions';
import { describeError } from './userError';

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
 * Registers a command with uniform error handling: any failure becomes one notification with its reason (and the
 * remedy the error carries) instead of an unhandled rejection. Not rethrown, so VS Code does not add a second,
 * less helpful notification; `onDidFailCommand` reports it to whoever needs to know.
 */
export function registerCommand(context: vscode.ExtensionContext, id: CommandIdValue, handler: (...args: unknown[]) => unknown): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(...args);
      } catch (err) {
        const message = describeError(err);
        failures.fire({ command: id, message, error: err });
        void vscode.window.showErrorMessage(message);
        return undefined;
      }
    }),
  );
}
