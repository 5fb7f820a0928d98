/** Loading the user's agent module: export shapes, CommonJS and ESM, reloading on change, trust and errors. */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from '@openai/agents';
import {
  UntrustedWorkspaceError,
  UserAgentModuleCache,
  UserAgentModuleError,
  loadUserAgentModule,
} from '../../../src/agents/userAgentModule';
import { createConfiguredAgent } from '../../../src/agents/agentConfig';
import { Workspace } from '../../support/sessionHelpers';
import { SDK_PATH, writeAgentModule } from './agentTestKit';

const trusted = { trusted: true };

/** Sets a file's mtime explicitly, so a rewrite within the same clock tick still counts as a change. */
function touch(path: string, seconds: number): void {
  utimesSync(path, seconds, seconds);
}

describe('userAgentModule', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-module-')));
  afterEach(() => ws.cleanup());

  it('loads `exports.agent` from CommonJS, built with the same SDK copy', async () => {
    const path = writeAgentModule(ws.dir, 'a.js', `exports.agent = new Agent({ name: 'Named export' });`);
    const loaded = await loadUserAgentModule(path, trusted);
    assert.ok(loaded.agent instanceof Agent);
    assert.equal(loaded.agent.name, 'Named export');
    assert.equal(loaded.exportName, 'agent');
    assert.equal(loaded.format, 'commonjs');
    assert.equal(loaded.sameSdk, true);
  });

  it('loads `module.exports = agent`, a CommonJS factory, and resolves relative paths against baseDir', async () => {
    writeAgentModule(ws.dir, 'b.cjs', `module.exports = new Agent({ name: 'Whole module' });`);
    const b = await loadUserAgentModule('b.cjs', { trusted: true, baseDir: ws.dir });
    assert.equal(b.exportName, 'module.exports');
    writeFileSync(join(ws.dir, 'f.js'), `module.exports = ({ sdk, z }) => new sdk.Agent({ name: 'Factory ' + typeof z.string });`);
    const f = await loadUserAgentModule(join(ws.dir, 'f.js'), trusted);
    assert.equal(f.exportName, 'factory:module.exports');
    assert.equal(f.agent.name, 'Factory function');
    assert.equal(f.sameSdk, true, 'a factory gets the extension SDK, so no node_modules are needed');
  });

  it('loads ES modules: .mjs with a default factory, and .js in a "type": "module" package', async () => {
    writeFileSync(
      join(ws.dir, 'esm.mjs'),
      `export default function ({ sdk, z }) {
  return new sdk.Agent({ name: 'ESM factory', tools: [sdk.tool({ name: 't', description: 'd', parameters: z.object({}), execute: async () => 'x' })] });
}`,
    );
    const esm = await loadUserAgentModule(join(ws.dir, 'esm.mjs'), trusted);
    assert.equal(esm.format, 'module');
    assert.equal(esm.exportName, 'factory:default');
    assert.equal(esm.agent.tools.length, 1);

    const pkg = join(ws.dir, 'pkg');
    mkdirSync(pkg);
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(pkg, 'agent.js'),
      `import { Agent } from ${JSON.stringify(SDK_PATH)};\nexport const agent = new Agent({ name: 'ESM named' });`,
    );
    const named = await loadUserAgentModule(join(pkg, 'agent.js'), trusted);
    assert.equal(named.format, 'module');
    assert.equal(named.exportName, 'agent');
    assert.equal(named.agent.name, 'ESM named');
  });

  it('reloads a CommonJS module (and its own helper files) when the mtime changes, not before', async () => {
    const helper = join(ws.dir, 'helper.js');
    writeFileSync(helper, `module.exports = 'one';`);
    const path = writeAgentModule(ws.dir, 'r.js', `exports.agent = new Agent({ name: 'v1 ' + require('./helper.js') });`);
    touch(path, 1_000_000);
    const cache = new UserAgentModuleCache();
    const first = await cache.get(path, undefined, trusted);
    assert.equal(first.agent.name, 'v1 one');
    assert.equal(await cache.get(path, 1_000_000_000, trusted), first, 'same mtime: the cached agent');

    writeFileSync(helper, `module.exports = 'two';`);
    writeAgentModule(ws.dir, 'r.js', `exports.agent = new Agent({ name: 'v2 ' + require('./helper.js') });`);
    touch(path, 1_000_100);
    const second = await cache.get(path, undefined, trusted);
    assert.equal(second.agent.name, 'v2 two');
    assert.notEqual(second, first);
    assert.equal(second.mtimeMs, 1_000_100_000);
  });

  it('reloads an ES module when the mtime changes', async () => {
    const path = join(ws.dir, 'e.mjs');
    writeFileSync(path, `export default ({ sdk }) => new sdk.Agent({ name: 'esm v1' });`);
    touch(path, 2_000_000);
    const cache = new UserAgentModuleCache();
    assert.equal((await cache.get(path, undefined, trusted)).agent.name, 'esm v1');
    writeFileSync(path, `export default ({ sdk }) => new sdk.Agent({ name: 'esm v2' });`);
    touch(path, 2_000_001);
    assert.equal((await cache.get(path, undefined, trusted)).agent.name, 'esm v2');
  });

  it('refuses to load anything in an untrusted workspace (the module never runs)', async () => {
    const marker = join(ws.dir, 'ran');
    const path = writeAgentModule(
      ws.dir,
      'evil.js',
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x');\nexports.agent = new Agent({ name: 'x' });`,
    );
    await assert.rejects(loadUserAgentModule(path, { trusted: false }), UntrustedWorkspaceError);
    await assert.rejects(new UserAgentModuleCache().get(path, undefined, { trusted: false }), /only used in a trusted workspace/);
    assert.equal(existsSync(marker), false);
  });

  it('reports modules without an agent, broken modules, bad factories, missing files and files outside the workspace', async () => {
    const none = writeAgentModule(ws.dir, 'none.js', `exports.helper = 1; exports.other = 'x';`);
    await assert.rejects(
      loadUserAgentModule(none, trusted),
      (e: unknown) => e instanceof UserAgentModuleError && /exports no Agent.*It exports: helper, other/.test(e.message),
    );
    const broken = join(ws.dir, 'broken.js');
    writeFileSync(broken, 'module.exports = {');
    await assert.rejects(loadUserAgentModule(broken, trusted), /Loading the agent module .*broken\.js failed/);
    const bad = join(ws.dir, 'bad.js');
    writeFileSync(bad, 'module.exports = () => 42;');
    await assert.rejects(loadUserAgentModule(bad, trusted), /returned number, not an Agent/);
    const throwing = join(ws.dir, 'throwing.js');
    writeFileSync(throwing, `module.exports = () => { throw new Error('no config'); };`);
    await assert.rejects(loadUserAgentModule(throwing, trusted), /factory 'module.exports' .* threw: no config/);
    await assert.rejects(loadUserAgentModule(join(ws.dir, 'missing.js'), trusted), /does not exist/);
    const txt = join(ws.dir, 'agent.ts');
    writeFileSync(txt, '');
    await assert.rejects(loadUserAgentModule(txt, trusted), /must be a \.js, \.cjs or \.mjs file/);
    const inner = join(ws.dir, 'inner');
    mkdirSync(inner);
    const outside = writeAgentModule(ws.dir, 'outside.js', `exports.agent = new Agent({ name: 'x' });`);
    await assert.rejects(loadUserAgentModule(outside, { trusted: true, allowedRoot: inner }), /outside the workspace folder/);
  });

  it('accepts an agent built with another SDK copy by its shape, and the configured agent warns about it', async () => {
    const path = join(ws.dir, 'foreign.js');
    writeFileSync(
      path,
      `exports.agent = { name: 'Foreign', clone() {}, getAllTools: async () => [], getSystemPrompt: async () => '', asTool() {} };`,
    );
    const loaded = await loadUserAgentModule(path, trusted);
    assert.equal(loaded.sameSdk, false);
    const configured = await createConfiguredAgent({ model: 'm', instructions: 'i', agentModule: path, mcpServers: ['ignored'] }, 'k', {
      trusted: true,
    });
    assert.equal(configured.source, 'module');
    assert.match(configured.warnings.join('\n'), /another copy of @openai\/agents/);
    assert.match(configured.warnings.join('\n'), /mcpServers apply to the built-in agent only/);
  });
});
