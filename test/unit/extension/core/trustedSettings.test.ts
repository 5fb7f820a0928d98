/**
 * The settings an untrusted workspace must not control (issue 38 item 9, issue 46): the rule that reads them from the
 * user alone, the manifest that tells VS Code the same list, and the sources that must not go around either.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Setting } from '../../../../src/extension/core/contributions';
import { TRUSTED_ONLY_SETTINGS, isTrustedOnly, untrustedValue } from '../../../../src/extension/core/trustedSettings';

const root = join(__dirname, '..', '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  contributes: { configuration: { properties: Record<string, { scope?: string }> } };
};

describe('settings an untrusted workspace must not control', () => {
  it('covers what opens a port, sends data out, decides where files go or steers the agent', () => {
    for (const key of [
      Setting.tracesReceiverEnabled,
      Setting.tracesReceiverHost,
      Setting.tracesReceiverPort,
      Setting.tracesSendToOpenAI,
      Setting.reviewsLocation,
      Setting.agentModel,
      Setting.agentInstructions,
      Setting.agentBaseUrl,
      Setting.agentCommand,
      Setting.agentUrl,
    ])
      assert.ok(isTrustedOnly(key), key);
    assert.ok(!isTrustedOnly(Setting.discoveryGlobs));
  });

  it('keeps the costs shown and the models a retry runs on the user key from the workspace', () => {
    // A repository could price every run at 0, or preselect costly models for Retry with Several Models.
    for (const key of [Setting.pricingPrices, Setting.agentModels]) {
      assert.ok(isTrustedOnly(key), key);
      assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(`agentSessions.${key}`), key);
    }
  });

  it("takes the trace store's retention from the user alone: it prunes one store every workspace shares", () => {
    // `traces.maxSpans: 0` in a cloned repository's settings would delete every workspace's saved traces.
    for (const key of [Setting.tracesMaxSpans, Setting.tracesMaxAgeDays])
      assert.equal(manifest.contributes.configuration.properties[`agentSessions.${key}`]?.scope, 'application', key);
  });

  it('reads the user setting (else the default) and passes over what the workspace and its folders ask for', () => {
    // A cloned repository's .vscode/settings.json asking for a receiver open to the network.
    assert.deepEqual(untrustedValue({ defaultValue: '127.0.0.1', workspaceValue: '0.0.0.0' }, 'fallback'), {
      value: '127.0.0.1',
      ignored: true,
    });
    assert.deepEqual(untrustedValue({ defaultValue: false, globalValue: false, workspaceFolderValue: true }, false), {
      value: false,
      ignored: true,
    });
    assert.deepEqual(untrustedValue({ defaultValue: 4318, globalValue: 4400, workspaceValue: 80 }, 0), { value: 4400, ignored: true });
    // The user's own choice stands, and a workspace that agrees with it is not reported.
    assert.deepEqual(untrustedValue({ defaultValue: 'extension', globalValue: 'beside-file', workspaceValue: 'beside-file' }, 'x'), {
      value: 'beside-file',
      ignored: false,
    });
    assert.deepEqual(untrustedValue({ defaultValue: ['a'], workspaceValue: ['a'] }, []), { value: ['a'], ignored: false });
    assert.deepEqual(untrustedValue(undefined, 'gpt-4.1-mini'), { value: 'gpt-4.1-mini', ignored: false });
  });

  it('lists exactly these settings as restricted in package.json, each one a contributed setting', () => {
    const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
    assert.deepEqual([...restricted].sort(), TRUSTED_ONLY_SETTINGS.map((k) => `${Setting.section}.${k}`).sort());
    for (const name of restricted) {
      const contributed = manifest.contributes.configuration.properties[name];
      assert.ok(contributed, `${name} is a setting`);
      // An application- or machine-scoped setting would have no workspace value to pass over; these stay per window.
      assert.ok(contributed.scope === undefined || contributed.scope === 'window' || contributed.scope === 'resource', name);
    }
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
  });

  it('asks for trust and reads settings only through core/settings.ts', () => {
    const dir = join(root, 'src', 'extension');
    const offenders: string[] = [];
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file === join('core', 'settings.ts')) continue;
      const source = readFileSync(join(dir, file), 'utf8');
      // One owner: a second reader of trust or of the configuration could skip the trusted-only rule.
      for (const pattern of [/workspace\.isTrusted/, /onDidGrantWorkspaceTrust/, /getConfiguration\(/])
        if (pattern.test(source)) offenders.push(`${file}: ${pattern.source}`);
    }
    assert.deepEqual(offenders, []);
  });
});
