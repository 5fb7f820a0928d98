/**
 * The one way the extension reads its settings: `setting(Setting.x)` returns the value with its type, under the
 * section and key names of commandIds.ts, which test/unit/manifest.test.ts checks against package.json.
 */
import * as vscode from 'vscode';
import { Setting } from './contributions';

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
};

export type SettingKey = keyof typeof fallback;

/** The current value of `agentSessions.<key>`. Restricted settings are ignored by VS Code in untrusted workspaces. */
export function setting<K extends SettingKey>(key: K): (typeof fallback)[K] {
  return vscode.workspace.getConfiguration(Setting.section).get<(typeof fallback)[K]>(key, fallback[key]);
}

/** Whether a configuration change touches `agentSessions.<key>` (a setting or a group such as `agent`). */
export function affectsSetting(e: vscode.ConfigurationChangeEvent, key: SettingKey | typeof Setting.agent): boolean {
  return e.affectsConfiguration(`${Setting.section}.${key}`);
}
