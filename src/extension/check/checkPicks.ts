/**
 * The questions *Check Agent Against Reviews…* asks, one step each (docs/check.md, "In VS Code"): which file, which
 * reviewed turns (a query in the search syntax; empty for every good turn and every bad turn with a correction), which
 * agent (the built-in agent, the workspace's agent commands and agent URL), which graders, and what the re-runs do with their tool calls. A caller (a test, a keybinding) may answer
 * any of them in advance with `CheckArgs`.
 */
import * as vscode from 'vscode';
import { TOOLS_MODES, type ToolsMode } from '../../shared/protocol/replay';
import { parseSearchQuery } from '../../store/search/searchQuery';
import type { AgentChoices } from '../runs/agentChoices';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { fileItem } from '../databases/pickItems';
import { plainIconText } from '../core/iconText';
import { badArgument } from '../core/commandArgs';
import { UserFacingError } from '../core/userError';

/** What a caller may answer in advance (the second argument of the command). */
export interface CheckArgs {
  query?: string;
  /** An agent choice's id (src/shared/agentChoices.ts: `command:NAME`, `url`). */
  agent?: string;
  graders?: string[];
  tools?: ToolsMode;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The command's options argument, checked: it comes from outside. */
export function asCheckArgs(v: unknown, title: string): CheckArgs {
  if (v === undefined) return {};
  const expected = vscode.l10n.t('options ({ query, agent, graders, tools })');
  if (!isObj(v)) return badArgument(title, expected);
  const out: CheckArgs = {};
  if (v.query !== undefined) out.query = typeof v.query === 'string' ? v.query : badArgument(title, expected);
  if (v.agent !== undefined) out.agent = typeof v.agent === 'string' ? v.agent : badArgument(title, expected);
  if (v.graders !== undefined)
    out.graders =
      Array.isArray(v.graders) && v.graders.every((g) => typeof g === 'string') ? (v.graders as string[]) : badArgument(title, expected);
  if (v.tools !== undefined) out.tools = TOOLS_MODES.includes(v.tools as ToolsMode) ? (v.tools as ToolsMode) : badArgument(title, expected);
  return out;
}

/** A session file the user picks among the open ones (the only one without asking); undefined when cancelled. */
export async function pickFile(registry: DatabaseRegistry): Promise<string | undefined> {
  const files = registry.list().filter((e) => e.db && !e.remote);
  if (files.length === 0) throw new UserFacingError(vscode.l10n.t('No session file is open. Run "Open Session Database…" first.'));
  if (files.length === 1) return files[0]!.path;
  const pick = await vscode.window.showQuickPick(
    files.map((e) => ({ ...fileItem(e.path), path: e.path })),
    { title: vscode.l10n.t('Check Agent Against Reviews: session file') },
  );
  return pick?.path;
}

/** The query; '' for the default cases. Asks again while it cannot be read (the box says why). */
export async function pickQuery(title: string): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title,
    prompt: vscode.l10n.t(
      'Which reviewed turns to check, in the search syntax (is:good, is:bad, tag:refund, tool:get_weather, words). Empty: every good turn and every bad turn with a correction.',
    ),
    placeHolder: vscode.l10n.t('Every good turn, and every bad turn with a correction'),
    ignoreFocusOut: true,
    validateInput: (v) => {
      if (v.trim() === '') return undefined;
      try {
        parseSearchQuery(v);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    },
  });
}

/**
 * The agent: the built-in agent (or the workspace's agent module), the workspace's agent commands and its agent URL,
 * as a run offers them, the one chosen last first.
 */
export async function pickCheckAgent(choices: AgentChoices, title: string): Promise<string | undefined> {
  const view = choices.view();
  if (view.choices.length === 1) return view.choices[0]!.id;
  const ordered = [...view.choices].sort((a, b) => Number(b.id === view.selected) - Number(a.id === view.selected));
  const pick = await vscode.window.showQuickPick(
    ordered.map((c) => ({ label: plainIconText(c.label), description: plainIconText(c.detail), id: c.id })),
    { title, placeHolder: vscode.l10n.t('Which agent answers the reviewed turns again') },
  );
  return pick?.id;
}

/** The graders offered, each with what it checks; `model` only when a key is stored (it asks a judge model). */
function graderItems(hasKey: boolean): (vscode.QuickPickItem & { spec: string })[] {
  const items = [
    { spec: 'trajectory', detail: vscode.l10n.t('The same tools, by name, in the recorded order') },
    { spec: 'trajectory:args', detail: vscode.l10n.t('… and each call with the recorded arguments (as JSON)') },
    { spec: 'answer:normalized', detail: vscode.l10n.t('The expected answer, ignoring case, spacing and punctuation at the ends') },
    { spec: 'answer:contains', detail: vscode.l10n.t('The answer contains the expected answer (normalized)') },
    { spec: 'answer:exact', detail: vscode.l10n.t('The expected answer, character for character') },
    { spec: 'answer:json', detail: vscode.l10n.t('The same JSON value as the expected answer') },
  ];
  if (hasKey)
    items.push({ spec: 'model', detail: vscode.l10n.t('A judge model compares the answer with the expected one (uses your key)') });
  return items.map((i) => ({ label: i.spec, detail: i.detail, spec: i.spec, picked: i.spec === 'trajectory' || i.spec === 'model' }));
}

/** The graders, picked together; none picked is the default (trajectory, and model when a key is stored). */
export async function pickGraders(title: string, hasKey: boolean): Promise<string[] | undefined> {
  const picked = await vscode.window.showQuickPick(graderItems(hasKey), {
    title,
    placeHolder: vscode.l10n.t('Graders: a case passes when every one passes'),
    canPickMany: true,
    ignoreFocusOut: true,
  });
  return picked?.map((p) => p.spec);
}

/** What the re-runs do with their tool calls; the setting's mode first. */
export async function pickTools(title: string, fallback: ToolsMode): Promise<ToolsMode | undefined> {
  const detail: Record<ToolsMode, string> = {
    replay: vscode.l10n.t('A call that matches a recorded one gets its recorded output; others run'),
    strict: vscode.l10n.t('A call off the recording stops the case (an error)'),
    live: vscode.l10n.t('Every tool runs'),
  };
  const modes = [fallback, ...TOOLS_MODES.filter((m) => m !== fallback)];
  const pick = await vscode.window.showQuickPick(
    modes.map((m) => ({
      label: m,
      detail: detail[m],
      description: m === fallback ? vscode.l10n.t('agentSessions.replay.mode') : '',
      mode: m,
    })),
    { title, placeHolder: vscode.l10n.t('Tool calls of the re-runs') },
  );
  return pick?.mode;
}
