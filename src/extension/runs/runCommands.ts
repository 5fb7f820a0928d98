/** *Send Message to Branch…* and *Set API Key*. */
import * as vscode from 'vscode';
import { arg, argOrInput } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { sessionTarget } from '../databases/pickers';
import type { Services } from '../services';
import { pickAgent } from './agentChoices';
import { isPausedRun, pausedRunText } from '../../shared/pausedRun';
import { showErrorNotice, showInformationNotice } from '../core/notices';

/** Asks for the API key (or takes `key`) and keeps it in secret storage; resolves false when cancelled. */
export async function setApiKey(s: Services, keyArg?: string): Promise<boolean> {
  const key = await argOrInput(keyArg, {
    title: vscode.l10n.t('Agent Sessions: API key'),
    prompt: vscode.l10n.t('Stored in VS Code secret storage, never in settings. Leave empty to remove the stored key.'),
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return false;
  await s.runner.setApiKey(key);
  void showInformationNotice(key.trim() ? vscode.l10n.t('API key stored in secret storage.') : vscode.l10n.t('Stored API key removed.'));
  return true;
}

export function runCommands(s: Services): CommandsOf<'sendMessage' | 'setApiKey'> {
  return {
    setApiKey: command(vscode.l10n.t('Set API Key'), [arg.text], (key) => setApiKey(s, key)),
    sendMessage: command(
      vscode.l10n.t('Send Message to Branch'),
      [arg.optionalNode(() => vscode.l10n.t('a session or branch'), 'session', 'branch'), arg.text, arg.text],
      async (node, inputArg, agentArg) => {
        const picked = await sessionTarget(s.registry, node);
        if (!picked) return undefined;
        const { target, branchId } = picked;
        const agent = await pickAgent(s.runner.choices, agentArg, vscode.l10n.t('Message to {0} · {1}', target.sessionId, branchId));
        if (agent === undefined) return undefined;
        // Before asking for the message: a run that cannot start should not cost the user their typing.
        await s.runner.checkCanStart(target.dbPath, agent);
        const input = await argOrInput(inputArg, {
          title: vscode.l10n.t('Message to {0} · {1}', target.sessionId, branchId),
          prompt: vscode.l10n.t('The agent continues this branch.'),
          ignoreFocusOut: true,
        });
        if (input === undefined) return undefined;
        // The run streams into the conversation view of the session.
        const panel = s.panels.open({ dbPath: target.dbPath, sessionId: target.sessionId, branchId });
        await s.panels.whenReady(panel);
        const outcome = await panel.startRun(branchId, input, undefined, { agent }).outcome;
        // A run the agent paused, waiting for input, is no error: what it waits for, as information.
        if (isPausedRun(outcome)) void showInformationNotice(`${pausedRunText(outcome.interrupts)} ${outcome.written.summary}`);
        else if (outcome.kind === 'run/failed') void showErrorNotice(`${outcome.message} ${outcome.written.summary}`);
        return outcome;
      },
    ),
  };
}
