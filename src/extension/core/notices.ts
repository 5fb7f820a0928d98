/**
 * Notifications, whose words often come from outside: an agent's error and the last lines of its stderr, what a paused
 * run waits for, a file's name, a server's message, a link found in a session. VS Code draws `[label](target)` in a
 * notification's message as a link, and opens an `http(s):`, `file:` or `command:` target with commands allowed, the
 * command's arguments read from the target's query (its notificationsViewer.ts): one click on words an agent wrote
 * could run any command with any arguments. None of our messages links, so every notification goes through here, and
 * every `](` in its message is written `] (`: the words stay readable, and no link is drawn. (A modal's `detail` is
 * plain text: VS Code draws no link there.) A progress notification is a notification too: its title and each message
 * it reports go through the same rule (`withNoticeProgress`). `no-restricted-properties` keeps
 * `vscode.window.show…Message` and `withProgress` to this file.
 */
import * as vscode from 'vscode';
import { plainNotice } from './noticeText';

// The window's functions are looked up at each call, so a test that replaces one still sees every notification.
export const showErrorNotice = ((message: string, ...rest: unknown[]) =>
  (vscode.window.showErrorMessage as (m: string, ...r: unknown[]) => Thenable<unknown>)(
    plainNotice(message),
    ...rest,
  )) as typeof vscode.window.showErrorMessage;
export const showWarningNotice = ((message: string, ...rest: unknown[]) =>
  (vscode.window.showWarningMessage as (m: string, ...r: unknown[]) => Thenable<unknown>)(
    plainNotice(message),
    ...rest,
  )) as typeof vscode.window.showWarningMessage;
export const showInformationNotice = ((message: string, ...rest: unknown[]) =>
  (vscode.window.showInformationMessage as (m: string, ...r: unknown[]) => Thenable<unknown>)(
    plainNotice(message),
    ...rest,
  )) as typeof vscode.window.showInformationMessage;

/**
 * `vscode.window.withProgress`, with the title and every reported message drawing no link: a progress notification's
 * words are a notification's (`Importing <file name>…`, `Copying <session id>`).
 */
export function withNoticeProgress<R>(
  options: vscode.ProgressOptions,
  task: (progress: vscode.Progress<{ message?: string; increment?: number }>, token: vscode.CancellationToken) => Thenable<R>,
): Thenable<R> {
  const title = options.title === undefined ? {} : { title: plainNotice(options.title) };
  return vscode.window.withProgress({ ...options, ...title }, (progress, token) =>
    task(
      { report: (value) => progress.report(value.message === undefined ? value : { ...value, message: plainNotice(value.message) }) },
      token,
    ),
  );
}
