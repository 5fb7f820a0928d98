/**
 * Which agent a run uses, as the host offers it and the views show it: the built-in agent (or the configured module),
 * each agent command of `agentSessions.agent.command`, and the agent URL (docs/agent-command.md §1). Plain JSON, so it
 * crosses `postMessage`; every string may come from settings or a command's stderr: render it as text.
 */

/** The id of the built-in agent (or `agentSessions.agent.module` when set). */
export const BUILTIN_AGENT_ID = 'builtin';
/** The id of the agent served at `agentSessions.agent.url`. */
export const URL_AGENT_ID = 'url';

/** The id of the command named `name`. */
export function commandAgentId(name: string): string {
  return `command:${name}`;
}

/** How the last run through a command (or the URL) ended, for its status line. */
export interface AgentStatusView {
  /** When it ended (ms since the epoch). */
  endedAt: number;
  /** False when it failed or was stopped; a run the agent paused, waiting for input, is no failure. */
  ok: boolean;
  /** One line: "completed", "paused, waiting for input", "exit code 3", "stopped", "HTTP 500". */
  summary: string;
  exitCode: number | null;
  /** The last lines of its stderr. */
  stderrTail: string[];
}

export interface AgentChoiceView {
  id: string;
  kind: 'builtin' | 'command' | 'url';
  /** The name people see: "Built-in agent (gpt-4.1-mini)", the command's name, the URL. */
  label: string;
  /** The command line or URL (for a tooltip), or the model. */
  detail: string;
  /** The last run's end, for commands and the URL; null before the first. */
  status: AgentStatusView | null;
}

export interface AgentChoicesView {
  choices: AgentChoiceView[];
  /** The id chosen last in this workspace (a choice that is no longer offered falls back to the built-in agent). */
  selected: string;
  /** Set when commands are configured but cannot run here (an untrusted workspace). */
  note: string | null;
}
