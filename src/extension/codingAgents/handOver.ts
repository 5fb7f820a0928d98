/**
 * Handing a turn, a comparison or a failed tool call over to the chat (*Ask Copilot about This Turn*, *… This
 * Comparison*, *Explain the Failure*): a prompt that names the Language Model tool to use (`#readTurns`, …) and holds
 * where the turn is in a data block (handOverPrompts.ts), left in the input of the chat's agent mode for the user to
 * send (`workbench.action.chat.open`: `chatOpenOptions`). Without a chat, the prompt goes to the clipboard and a
 * message says how to get one.
 */
import * as vscode from 'vscode';
import { chatOpenOptions } from './handOverPrompts';
import { showInformationNotice } from '../core/notices';

export { comparisonPrompt, failurePrompt, turnPrompt, type FailedCall, type TurnLocation } from './handOverPrompts';

/** The command that opens the chat with a prompt. */
export const CHAT_OPEN_COMMAND = 'workbench.action.chat.open';

/** What a hand-over did: the prompt, and whether a chat took it (else it is on the clipboard). */
export interface HandOverOutcome {
  prompt: string;
  opened: boolean;
}

/** How long to wait for the language models to be listed before taking it that there are none. */
const MODEL_WAIT_MS = 2000;

export class HandOver {
  /** The command that opens the chat; a test puts one of its own here (or one that does not exist). */
  chatCommand = CHAT_OPEN_COMMAND;
  /**
   * Whether a chat could answer: VS Code ships its chat view (and the command) without any model behind it — in
   * code-server, or before Copilot is installed the command opens nothing — so a language model must be there too.
   * A test puts its own answer here.
   */
  hasChatModel = async (): Promise<boolean> => {
    // Bounded: where no chat extension ever registers a model, the answer may never come (seen in code-server).
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), MODEL_WAIT_MS));
    const models = Promise.resolve(vscode.lm.selectChatModels()).then(
      (m) => m.length > 0,
      () => false,
    );
    return Promise.race([models, timeout]);
  };

  /**
   * Opens the chat in agent mode (the mode that calls tools) with `prompt` left in the input: agent mode can edit
   * files and run commands, so the user reads the prompt and sends it, never us. Without a chat the prompt goes to
   * the clipboard and a message says how to get one.
   */
  async open(prompt: string): Promise<HandOverOutcome> {
    const commands = await vscode.commands.getCommands(true);
    if (commands.includes(this.chatCommand) && (await this.hasChatModel())) {
      await vscode.commands.executeCommand(this.chatCommand, chatOpenOptions(prompt));
      return { prompt, opened: true };
    }
    await vscode.env.clipboard.writeText(prompt);
    const get = vscode.l10n.t('Get GitHub Copilot Chat');
    // Not awaited: the command's result must not wait for the user to dismiss the message.
    void showInformationNotice(
      vscode.l10n.t(
        'No chat with a language model is installed to hand this over to. Install GitHub Copilot Chat (or another chat that uses VS Code language model tools), then run the command again. The prompt is on the clipboard.',
      ),
      get,
    ).then((choice) => {
      if (choice === get) void vscode.commands.executeCommand('workbench.extensions.search', '@id:GitHub.copilot-chat');
    });
    return { prompt, opened: false };
  }
}
