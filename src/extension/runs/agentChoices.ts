/**
 * The agents a run can use (src/shared/agentChoices.ts): the built-in agent, the user's agent commands and the agent
 * URL, from the settings; which one was chosen last in this workspace; and how each command's last run ended, so the
 * composer and the pickers show it without opening a log. One owner for all three.
 */
import * as vscode from 'vscode';
import type { CommandAgent } from '../../agents/command/commandRun';
import {
  BUILTIN_AGENT_ID,
  URL_AGENT_ID,
  commandAgentId,
  type AgentChoiceView,
  type AgentChoicesView,
  type AgentStatusView,
} from '../../shared/agentChoices';
import type { RunOutcome } from '../../shared/protocol/runEvents';
import { isPausedRun } from '../../shared/pausedRun';
import { Setting } from '../core/contributions';
import { affectsSetting, setting, workspaceTrust } from '../core/settings';
import { UserFacingError } from '../core/userError';
import { plainIconText } from '../core/iconText';
import { urlWithoutPassword } from '../../shared/urlPasswords';

const SELECTED_KEY = 'agentSessions.agentChoice';

/** A command of `agentSessions.agent.command`: a single command line is named by itself. */
export interface ConfiguredCommand {
  name: string;
  command: string;
}

/** The configured commands, in the settings' order; entries that are not non-empty strings are skipped. */
export function readAgentCommands(): ConfiguredCommand[] {
  const value = setting(Setting.agentCommand);
  if (typeof value === 'string') return value.trim() === '' ? [] : [{ name: value.trim(), command: value.trim() }];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].trim() !== '' && e[0].trim() !== '')
    .map(([name, command]) => ({ name: name.trim(), command: command.trim() }));
}

/** What a choice resolves to for a run. */
export type ResolvedAgent = { kind: 'builtin' } | { kind: 'external'; id: string; agent: CommandAgent };

export class AgentChoices implements vscode.Disposable {
  private readonly statuses = new Map<string, AgentStatusView>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the choices, the selection or a status changed. */
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [this.changed];

  constructor(private readonly state: vscode.Memento) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSetting(e, Setting.agent)) this.changed.fire();
      }),
      workspaceTrust.onDidChange(() => this.changed.fire()),
    );
  }

  /** Every choice, the built-in agent first. Commands and the URL only in a trusted workspace. */
  view(): AgentChoicesView {
    const model = setting(Setting.agentModel);
    const module = setting(Setting.agentModule).trim();
    const choices: AgentChoiceView[] = [
      {
        id: BUILTIN_AGENT_ID,
        kind: 'builtin',
        label: module ? vscode.l10n.t('Agent module ({0})', module) : vscode.l10n.t('Built-in agent ({0})', model),
        detail: module || model,
        status: null,
      },
    ];
    let note: string | null = null;
    if (workspaceTrust.isTrusted) {
      for (const c of readAgentCommands()) {
        const id = commandAgentId(c.name);
        choices.push({ id, kind: 'command', label: c.name, detail: c.command, status: this.statuses.get(id) ?? null });
      }
      const url = setting(Setting.agentUrl).trim();
      // Shown without its password (a URL is drawn in pickers and the view, and fetch never sends one anyway).
      const shown = urlWithoutPassword(url);
      if (url)
        choices.push({ id: URL_AGENT_ID, kind: 'url', label: shown, detail: shown, status: this.statuses.get(URL_AGENT_ID) ?? null });
    } else if (readAgentCommands().length > 0 || setting(Setting.agentUrl).trim()) {
      note = vscode.l10n.t('Agent commands run only in a trusted workspace.');
    }
    const stored = this.state.get<string>(SELECTED_KEY, BUILTIN_AGENT_ID);
    const selected = choices.some((c) => c.id === stored) ? stored : BUILTIN_AGENT_ID;
    return { choices, selected, note };
  }

  /** The choice to use when a run does not name one: the last one chosen, while it is still offered. */
  get selected(): string {
    return this.view().selected;
  }

  /** Remembers the choice for this workspace (the views and pickers start from it). */
  async select(id: string): Promise<void> {
    if (!this.view().choices.some((c) => c.id === id)) throw new UserFacingError(vscode.l10n.t('No agent "{0}" is configured.', id));
    await this.state.update(SELECTED_KEY, id);
    this.changed.fire();
  }

  /** The agent for a run; a UserFacingError when the choice is not (or no longer) offered. */
  resolve(id: string | undefined): ResolvedAgent {
    const chosen = id ?? this.selected;
    if (chosen === BUILTIN_AGENT_ID) return { kind: 'builtin' };
    if (!workspaceTrust.isTrusted)
      throw new UserFacingError(vscode.l10n.t('Agent commands run only in a trusted workspace. Trust this folder to use "{0}".', chosen));
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (chosen === URL_AGENT_ID) {
      const url = setting(Setting.agentUrl).trim();
      if (url) return { kind: 'external', id: chosen, agent: { kind: 'url', url } };
    } else {
      const command = readAgentCommands().find((c) => commandAgentId(c.name) === chosen);
      if (command) return { kind: 'external', id: chosen, agent: { kind: 'command', name: command.name, command: command.command, cwd } };
    }
    throw new UserFacingError(
      vscode.l10n.t('The agent "{0}" is not configured any more (agentSessions.agent.command, agentSessions.agent.url).', chosen),
    );
  }

  /** Notes how a run through a command or the URL ended. */
  recordEnd(id: string, outcome: RunOutcome): void {
    const c = outcome.command;
    // A run the agent paused, waiting for input, did what it should: not shown as a failure.
    const paused = isPausedRun(outcome);
    const ok = outcome.kind === 'run/completed' || paused;
    const summary = paused
      ? vscode.l10n.t('paused, waiting for input')
      : ok
        ? vscode.l10n.t('completed')
        : outcome.failure === 'cancelled'
          ? vscode.l10n.t('stopped')
          : c?.status !== undefined && (c.status < 200 || c.status > 299)
            ? vscode.l10n.t('HTTP {0}', c.status)
            : c?.exitCode !== null && c?.exitCode !== undefined
              ? vscode.l10n.t('exit code {0}', c.exitCode)
              : c?.signal
                ? vscode.l10n.t('ended by {0}', c.signal)
                : vscode.l10n.t('failed');
    this.statuses.set(id, { endedAt: Date.now(), ok, summary, exitCode: c?.exitCode ?? null, stderrTail: c?.stderrTail ?? [] });
    this.changed.fire();
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}

/**
 * The agent for a run started from the palette or a menu: `idArg` when a caller passed one (tests, keybindings), else
 * a quick pick when there is more than the built-in agent (the last choice first, each command with its last run), else
 * the built-in agent. Undefined when the user cancelled.
 */
export async function pickAgent(choices: AgentChoices, idArg: string | undefined, title: string): Promise<string | undefined> {
  if (idArg !== undefined) return idArg;
  const view = choices.view();
  if (view.choices.length < 2) return view.selected;
  const ordered = [...view.choices].sort((a, b) => Number(b.id === view.selected) - Number(a.id === view.selected));
  const pick = await vscode.window.showQuickPick(
    ordered.map((c) => ({
      label: plainIconText(c.label),
      description: plainIconText(c.status ? vscode.l10n.t('last run: {0}', c.status.summary) : c.kind === 'builtin' ? '' : c.detail),
      detail: c.status && c.status.stderrTail.length > 0 ? plainIconText(c.status.stderrTail[c.status.stderrTail.length - 1]!) : undefined,
      id: c.id,
    })),
    { title, placeHolder: vscode.l10n.t('Which agent answers') },
  );
  if (!pick) return undefined;
  await choices.select(pick.id);
  return pick.id;
}
