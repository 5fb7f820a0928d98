/**
 * The one way the extension reads its settings: `setting(Setting.x)` returns the value with its type, under the
 * section and key names of contributions.ts, which test/unit/manifest.test.ts checks against package.json. It is also
 * the one owner of "a setting honoured only from trusted places" (trustedSettings.ts) and of the workspace's trust as
 * the extension sees it (`workspaceTrust`).
 */
import * as vscode from 'vscode';
import { Setting } from './contributions';
import { TRUSTED_ONLY_SETTINGS, isTrustedOnly, untrustedValue } from './trustedSettings';
import { showWarningNotice } from './notices';

/** Every setting the extension reads, with the value used when VS Code has none (package.json has the defaults users see). */
const fallback = {
  [Setting.discoveryGlobs]: [] as string[],
  [Setting.openReadOnly]: false as boolean,
  [Setting.agentModel]: 'gpt-4.1-mini' as string,
  [Setting.agentModels]: [] as string[],
  [Setting.agentInstructions]: 'You are a helpful assistant.' as string,
  [Setting.agentBaseUrl]: '' as string,
  [Setting.agentMcpServers]: [] as string[],
  [Setting.agentModule]: '' as string,
  [Setting.agentMaxRetries]: 2 as number,
  [Setting.agentRequestTimeoutSeconds]: 0 as number,
  // A string or a map of names to strings; agentChoices.ts checks the shape.
  [Setting.agentCommand]: '' as unknown,
  [Setting.agentUrl]: '' as string,
  [Setting.agentCommandTimeoutSeconds]: 600 as number,
  // Unknown until validated: withOverrides() checks every entry.
  [Setting.pricingPrices]: {} as unknown,
  [Setting.tracesRecordRuns]: true as boolean,
  [Setting.tracesSendToOpenAI]: false as boolean,
  [Setting.tracesMaxSpans]: 1_000_000 as number,
  [Setting.tracesMaxAgeDays]: 30 as number,
  [Setting.tracesReceiverEnabled]: false as boolean,
  [Setting.tracesReceiverPort]: 4318 as number,
  [Setting.tracesReceiverHost]: '127.0.0.1' as string,
  [Setting.reviewsLocation]: 'extension' as 'extension' | 'beside-file',
  // Unknown until checked: replay/replaySettings.ts falls back to replay on anything else.
  [Setting.replayMode]: 'replay' as unknown,
  [Setting.replayMatchNameOnly]: [] as unknown,
  // Unknown until checked: guard/guardService.ts keeps the entries that are text.
  [Setting.historyGuardFiles]: [] as unknown,
};

export type SettingKey = keyof typeof fallback;

/**
 * The current value of `agentSessions.<key>`. A trusted-only setting (trustedSettings.ts) comes from the user's
 * settings alone while the workspace is not trusted, whatever the workspace's settings say, and the user is told
 * once that the workspace's value was ignored. (VS Code's Restricted Mode does the same for the settings package.json
 * lists as restricted; reading them here too does not depend on it.)
 */
export function setting<K extends SettingKey>(key: K): (typeof fallback)[K] {
  const config = vscode.workspace.getConfiguration(Setting.section);
  if (isTrustedOnly(key) && !workspaceTrust.isTrusted) {
    const { value, ignored } = untrustedValue(config.inspect<(typeof fallback)[K]>(key), fallback[key]);
    if (ignored && !ignoredSettings.has(`${Setting.section}.${key}`)) noteIgnored();
    return value;
  }
  return config.get<(typeof fallback)[K]>(key, fallback[key]);
}

let simulatedUntrusted = false;
const trustChanged = new vscode.EventEmitter<void>();
/** The trusted-only settings whose workspace values were ignored in this window (each told once). */
const ignoredSettings = new Set<string>();

/**
 * The workspace's trust as every check in the extension reads it: VS Code's workspace trust. The in-host tests run in
 * a trusted workspace (the test host turns trust off, and an untrusted host would need a second host run), so they
 * stand in for an untrusted one with `simulateUntrusted`; nothing else calls it.
 */
export const workspaceTrust = {
  get isTrusted(): boolean {
    return !simulatedUntrusted && vscode.workspace.isTrusted;
  },
  /** Calls `listener` when trust is granted (VS Code never takes it back within a window) or the simulation changes. */
  onDidChange(listener: () => void): vscode.Disposable {
    return vscode.Disposable.from(vscode.workspace.onDidGrantWorkspaceTrust(listener), trustChanged.event(listener));
  },
  /** The trusted-only settings whose workspace values were ignored so far, `agentSessions.` included. */
  get ignored(): string[] {
    return [...ignoredSettings].sort();
  },
  simulateUntrusted(untrusted: boolean): void {
    simulatedUntrusted = untrusted;
    ignoredSettings.clear();
    trustChanged.fire();
  },
};

/**
 * Tells the user that the untrusted workspace's values were ignored: on the first such read, one notice naming every
 * trusted-only setting the workspace sets (not only the one read), and later one more for each setting it adds.
 */
function noteIgnored(): void {
  const config = vscode.workspace.getConfiguration(Setting.section);
  const names = TRUSTED_ONLY_SETTINGS.filter((key) => untrustedValue(config.inspect(key), fallback[key]).ignored)
    .map((key) => `${Setting.section}.${key}`)
    .filter((name) => !ignoredSettings.has(name));
  if (names.length === 0) return;
  for (const name of names) ignoredSettings.add(name);
  const manage = vscode.l10n.t('Manage Workspace Trust');
  void showWarningNotice(
    vscode.l10n.t(
      "This workspace's settings ask for {0}, which only a trusted workspace may set: your user settings are used instead.",
      names.join(', '),
    ),
    manage,
  ).then((answer) => (answer === manage ? vscode.commands.executeCommand('workbench.trust.manage') : undefined));
}

/** Whether a configuration change touches `agentSessions.<key>` (a setting or a group such as `agent`). */
export function affectsSetting(e: vscode.ConfigurationChangeEvent, key: SettingKey | typeof Setting.agent): boolean {
  return e.affectsConfiguration(`${Setting.section}.${key}`);
}

/** Writes `agentSessions.<key>` into the user's settings (the settings a workspace cannot override for trusted-only keys). */
export async function updateUserSetting(key: SettingKey, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration(Setting.section).update(key, value, vscode.ConfigurationTarget.Global);
}

/** One of VS Code's own settings (not ours: no trust rule applies), e.g. `problems.decorations.enabled`. */
export function workbenchSetting<T>(name: string, fallbackValue: T): T {
  return vscode.workspace.getConfiguration().get<T>(name, fallbackValue);
}
