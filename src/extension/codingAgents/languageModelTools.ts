/**
 * The query tools as VS Code Language Model tools (`vscode.lm.registerTool`; package.json `languageModelTools`,
 * generated from the same table: lmToolManifest.ts). Copilot's agent mode, or any extension through
 * `vscode.lm.invokeTool`, calls them on the stores open in the Sessions view and on session files the user names.
 * Read-only: no tool writes, so only reading a file the user did not open asks for a confirmation first.
 */
import * as vscode from 'vscode';
import { QueryError, toolErrorText } from '../../store/query/queryErrors';
import { QUERY_TOOLS, type QueryTool } from '../../store/query/queryTools';
import type { ExtensionStores } from './extensionStores';
import { lmToolName } from './lmToolManifest';

type ToolInput = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What the chat shows while a call runs: what is being read, in the user's words. */
export function invocationMessage(tool: QueryTool, input: ToolInput): string {
  const session = str(input.session) ?? '?';
  switch (tool.name) {
    case 'list_stores':
      return vscode.l10n.t('Listing the open session stores');
    case 'list_sessions':
      return str(input.store)
        ? vscode.l10n.t('Listing the sessions of {0}', str(input.store)!)
        : vscode.l10n.t('Listing the sessions of the open store');
    case 'branch_tree':
      return vscode.l10n.t('Reading the branches of session {0}', session);
    case 'read_turns':
      return typeof input.turn === 'number'
        ? vscode.l10n.t('Reading turn {0} of session {1}', input.turn, session)
        : vscode.l10n.t('Reading turns of session {0}', session);
    case 'search_sessions':
      return vscode.l10n.t('Searching sessions for {0}', str(input.query) ?? '?');
    case 'token_usage':
      return vscode.l10n.t('Reading the token usage of session {0}', session);
    case 'compare_branches':
      return vscode.l10n.t(
        'Comparing branches {0} and {1} of session {2}',
        str(input.branch) ?? '?',
        str(input.otherBranch) ?? '?',
        session,
      );
    case 'turn_timeline':
      return vscode.l10n.t('Reading the timeline of turn {0} of session {1}', String(input.turn ?? '?'), session);
    case 'turn_context':
      return vscode.l10n.t('Reading what the model saw in turn {0} of session {1}', String(input.turn ?? '?'), session);
    default:
      return tool.title;
  }
}

/** One query tool as a Language Model tool. */
export function languageModelTool(tool: QueryTool, stores: ExtensionStores): vscode.LanguageModelTool<ToolInput> {
  return {
    prepareInvocation({ input }) {
      const prepared: vscode.PreparedToolInvocation = { invocationMessage: invocationMessage(tool, input ?? {}) };
      // Reading a file is harmless to the file (read-only), but the user did not choose to show it: ask once.
      const file = stores.unopenedFile(input?.store);
      if (file === undefined) return prepared;
      return {
        ...prepared,
        confirmationMessages: {
          title: vscode.l10n.t('Read a session file that is not open?'),
          // As text: the path is the agent's, and Markdown in it (a link, an image, emphasis) could change what the
          // question seems to ask.
          message: new vscode.MarkdownString().appendText(
            vscode.l10n.t(
              'The agent asks to read {0}, which is not open in the Agent Sessions view. It is opened read-only: nothing is written.',
              file,
            ),
          ),
        },
      };
    },
    async invoke({ input }, token) {
      const abort = new AbortController();
      const cancelled = token.onCancellationRequested(() => abort.abort());
      if (token.isCancellationRequested) abort.abort();
      try {
        const answer = await stores.run(tool.name, (input ?? {}) as ToolInput, abort.signal);
        if (abort.signal.aborted) throw new vscode.CancellationError();
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(answer.text)]);
      } catch (err) {
        if (abort.signal.aborted || (err instanceof QueryError && err.problem === 'cancelled')) throw new vscode.CancellationError();
        // The message is written for the model: what was wrong and a call that works (src/store/query/queryErrors.ts).
        throw new Error(toolErrorText(tool.name, err));
      } finally {
        cancelled.dispose();
      }
    },
  };
}

/** Registers every query tool; the implementations by name (`agentSessions_list_stores`, …). */
export function registerQueryTools(
  stores: ExtensionStores,
  subscriptions: vscode.Disposable[],
): Map<string, vscode.LanguageModelTool<ToolInput>> {
  const tools = new Map<string, vscode.LanguageModelTool<ToolInput>>();
  for (const tool of QUERY_TOOLS) {
    const name = lmToolName(tool);
    const implementation = languageModelTool(tool, stores);
    subscriptions.push(vscode.lm.registerTool(name, implementation));
    tools.set(name, implementation);
  }
  return tools;
}
