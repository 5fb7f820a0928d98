/**
 * Handing a turn, a comparison or a failed tool call over to the chat (*Ask Copilot about This Turn*, *… This
 * Comparison*, *Explain the Failure*): a prompt that names the Language Model tool to use (`#readTurns`, …) and where
 * the turn is (store, session, branch, turn), opened in the chat's agent mode (`workbench.action.chat.open`, whose
 * argument is VS Code's `IChatViewOpenOptions`: `query`, `isPartialQuery`, `mode`). Without a chat, the prompt goes
 * to the clipboard and a message says how to get one.
 */
import * as vscode from 'vscode';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import { toolReferenceName } from './lmToolManifest';

/** Where a turn is. */
export interface TurnLocation {
  /** The session file's path, or a server store's address without its password (what the tools' `store` takes). */
  dbPath: string;
  sessionId: string;
  branchId: string;
  turn: number;
}

/** A failed tool call of a turn. */
export interface FailedCall {
  sequenceNumber: number;
  toolName: string;
  /** Why it counts as failed (`tool error`, `timed out`, `status failed`, …: src/store/search/itemMatch.ts). */
  reason: string;
}

/** The command that opens the chat with a prompt. */
export const CHAT_OPEN_COMMAND = 'workbench.action.chat.open';

const ref = (queryTool: string): string => `#${toolReferenceName(queryTool)}`;
const quoted = (text: string): string => JSON.stringify(text);

/** *Ask Copilot about This Turn*: the turn to read, left open for the user's question. */
export function turnPrompt(t: TurnLocation): string {
  return vscode.l10n.t(
    'Use {0} to read turn {1} on branch {2} of session {3} in the session store {4}, then answer: ',
    ref('read_turns'),
    t.turn,
    quoted(t.branchId),
    quoted(t.sessionId),
    t.dbPath,
  );
}

/** *Ask Copilot about This Comparison*: the branches to compare (the first is the baseline), left open for the question. */
export function comparisonPrompt(targets: readonly CompareTarget[]): string {
  const [base, ...others] = targets;
  if (!base || others.length === 0) throw new Error('a comparison has two branches or more');
  const oneSession = others.every((t) => t.dbPath === base.dbPath && t.sessionId === base.sessionId);
  if (oneSession)
    return vscode.l10n.t(
      'Use {0} to compare branch {1} (the baseline) with {2} in session {3} of the session store {4}, then answer: ',
      ref('compare_branches'),
      quoted(base.branchId),
      others.map((t) => quoted(t.branchId)).join(', '),
      quoted(base.sessionId),
      base.dbPath,
    );
  // compare_branches compares two branches of one session; branches of different sessions are read side by side.
  const list = targets
    .map((t) => vscode.l10n.t('branch {0} of session {1} in {2}', quoted(t.branchId), quoted(t.sessionId), t.dbPath))
    .join('; ');
  return vscode.l10n.t(
    'Use {0} to read and compare these branches (the first is the baseline): {1}. Then answer: ',
    ref('read_turns'),
    list,
  );
}

/** *Explain the Failure*: a complete question, sent at once. */
export function failurePrompt(t: TurnLocation, call: FailedCall): string {
  return vscode.l10n.t(
    'Use {0} to read turn {1} on branch {2} of session {3} in the session store {4}. Its {5} call (item {6}) failed ({7}). Explain why it failed and what to change in the agent (its code, tools or instructions) so that it does not. If the turn was traced, {8} shows its model requests and tool calls in time.',
    ref('read_turns'),
    t.turn,
    quoted(t.branchId),
    quoted(t.sessionId),
    t.dbPath,
    call.toolName,
    call.sequenceNumber,
    call.reason,
    ref('turn_timeline'),
  );
}

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
   * Opens the chat in agent mode (the mode that calls tools) with `prompt`: sent at once when `send`, else left in the
   * input for the user to finish. Without a chat the prompt goes to the clipboard and a message says how to get one.
   */
  async open(prompt: string, send: boolean): Promise<HandOverOutcome> {
    const commands = await vscode.commands.getCommands(true);
    if (commands.includes(this.chatCommand) && (await this.hasChatModel())) {
      await vscode.commands.executeCommand(this.chatCommand, { query: prompt, isPartialQuery: !send, mode: 'agent' });
      return { prompt, opened: true };
    }
    await vscode.env.clipboard.writeText(prompt);
    const get = vscode.l10n.t('Get GitHub Copilot Chat');
    // Not awaited: the command's result must not wait for the user to dismiss the message.
    void vscode.window
      .showInformationMessage(
        vscode.l10n.t(
          'No chat with a language model is installed to hand this over to. Install GitHub Copilot Chat (or another chat that uses VS Code language model tools), then run the command again. The prompt is on the clipboard.',
        ),
        get,
      )
      .then((choice) => {
        if (choice === get) void vscode.commands.executeCommand('workbench.extensions.search', '@id:GitHub.copilot-chat');
      });
    return { prompt, opened: false };
  }
}
