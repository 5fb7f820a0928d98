/**
 * Notifications draw no link from words that come from outside (src/extension/core/notices.ts): VS Code draws
 * `[label](command:…)` in a notification's message as a link that runs the command. A file named so, opened as a
 * session database while it is none, is named in the failure's notification: as words.
 */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, closeAll, scratch, waitFor, type Scratch } from './helpers';

describe('notifications', () => {
  let s: Scratch;
  const shown: string[] = [];
  const showErrorMessage = vscode.window.showErrorMessage;
  before(() => {
    (vscode.window as { showErrorMessage: unknown }).showErrorMessage = (message: string) => {
      shown.push(message);
      return Promise.resolve(undefined);
    };
  });
  after(() => {
    (vscode.window as { showErrorMessage: unknown }).showErrorMessage = showErrorMessage;
  });
  beforeEach(() => (s = scratch()));
  afterEach(async () => {
    await closeAll(await api());
    s.cleanup();
  });

  it("show a file's name that reads as a command link as words, with no link", async () => {
    const name = '[Open](command:workbench.action.quit).db';
    const path = join(s.dir, name);
    writeFileSync(path, 'not a database, only text');
    shown.length = 0;
    await vscode.commands.executeCommand('agentSessions.openDatabase', path).then(
      () => undefined,
      () => undefined,
    );
    await waitFor(() => shown.some((m) => m.includes('[Open]')), 5000, 'a notification naming the file');
    const message = shown.find((m) => m.includes('[Open]'))!;
    assert.ok(message.includes('[Open] (command:workbench.action.quit).db'), message);
    assert.ok(!message.includes(']('), message);
  });
});
