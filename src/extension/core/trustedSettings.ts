/**
 * The settings a workspace may set only when the user trusts it: a cloned repository's `.vscode/settings.json` must
 * not open a port on the user's machine, send data out with the user's key, decide where our files are written, or
 * choose what the user's agent runs and is told. In an untrusted workspace these are read from the user's own settings
 * only. package.json lists the same settings in `capabilities.untrustedWorkspaces.restrictedConfigurations`
 * (test/unit/manifest.test.ts checks), so VS Code's Restricted Mode names them too. No `vscode` here: the rule is
 * unit-tested on its own, and settings.ts applies it.
 */
import { Setting } from './contributions';

/** The settings honoured only from places the user controls: user settings always, workspace ones once trusted. */
export const TRUSTED_ONLY_SETTINGS = [
  // What the built-in agent is and is told: a repository could otherwise steer the user's runs and their key.
  Setting.agentModel,
  Setting.agentInstructions,
  // The models *Retry with Several Models* picks first, each run on the user's key.
  Setting.agentModels,
  // What every cost the user is shown is reckoned at: a repository could show a costly run as free.
  Setting.pricingPrices,
  // Where requests go and what code runs.
  Setting.agentBaseUrl,
  Setting.agentMcpServers,
  Setting.agentModule,
  Setting.agentCommand,
  Setting.agentUrl,
  // Data out with the user's key.
  Setting.tracesSendToOpenAI,
  // A port opened on the user's machine, taking spans from whoever can reach it.
  Setting.tracesReceiverEnabled,
  Setting.tracesReceiverHost,
  Setting.tracesReceiverPort,
  // Where review data is written (beside each session file, that is, into the workspace).
  Setting.reviewsLocation,
  // Whether re-runs call the real tools again: a repository must not turn replay off and fire a second refund or
  // e-mail from a recorded turn (docs/replay.md).
  Setting.replayMode,
  Setting.replayMatchNameOnly,
] as const;

export type TrustedOnlySetting = (typeof TRUSTED_ONLY_SETTINGS)[number];

export function isTrustedOnly(key: string): key is TrustedOnlySetting {
  return (TRUSTED_ONLY_SETTINGS as readonly string[]).includes(key);
}

/** The scopes of a setting's value, as `WorkspaceConfiguration.inspect()` gives them. */
export interface InspectedSetting<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * A trusted-only setting's value in an untrusted workspace: the user's setting, else the default, else `fallback`;
 * `ignored` when the workspace or a folder of it sets a value that was passed over (the user is told once).
 */
export function untrustedValue<T>(inspected: InspectedSetting<T> | undefined, fallback: T): { value: T; ignored: boolean } {
  const value = inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
  const ignored = [inspected?.workspaceValue, inspected?.workspaceFolderValue].some(
    (v) => v !== undefined && JSON.stringify(v) !== JSON.stringify(value),
  );
  return { value, ignored };
}
