/**
 * The demo's agent as the workspace's agent module (`agentSessions.agent.module`, src/agents/userAgentModule.ts): the
 * weather assistant on its scripted model (src/agents/demoAgent.ts), so that in the demo the built-in agent answers
 * without a key or a network — *Retry from Here*, or *Check Agent Against Reviews…* with the built-in agent on the
 * demo's reviewed turns. The module is that file bundled with the agents SDK and zod left out: it is a factory, and
 * the extension hands it its own copies (`{ sdk, z }`), so the agent is built with the SDK that runs it. The demo
 * folder's settings name it, and a local endpoint (never called: the scripted model answers) so no key is asked for.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/** The module's file name in the demo folder. */
export const DEMO_AGENT_MODULE = 'demo-agent.cjs';

/** The demo folder's workspace settings: the module, and an endpoint on this machine (so a placeholder key does). */
export const DEMO_AGENT_SETTINGS = {
  'agentSessions.agent.module': DEMO_AGENT_MODULE,
  'agentSessions.agent.baseUrl': 'http://localhost:9/v1',
};

/** Writes the module and `.vscode/settings.json` into `folder` (the folder the demo opens). */
export async function writeDemoAgentModule(folder: string, root: string): Promise<string> {
  const bundled = await build({
    entryPoints: [join(root, 'src', 'agents', 'demoAgent.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['@openai/agents', '@openai/agents-core', 'zod'],
    write: false,
    logLevel: 'error',
  });
  const code = bundled.outputFiles[0]!.text;
  const path = join(folder, DEMO_AGENT_MODULE);
  writeFileSync(
    path,
    `'use strict';
// Written by npm start (scripts/demo/agentModule.ts): the demo's weather assistant on its scripted model, no key needed.
module.exports = ({ sdk, z }) => {
  const given = { '@openai/agents': sdk, zod: { z } };
  const load = (id) => {
    if (id in given) return given[id];
    throw new Error('the demo agent module cannot load ' + id);
  };
  const bundle = { exports: {} };
  (function (require, module, exports) {
${code}
  })(load, bundle, bundle.exports);
  // Ids of its own: the demo file's recorded calls are call_000001…, and a re-run's must not repeat them.
  return bundle.exports.createDemoAgent(Math.random().toString(36).slice(2, 6));
};
`,
  );
  mkdirSync(join(folder, '.vscode'), { recursive: true });
  writeFileSync(join(folder, '.vscode', 'settings.json'), `${JSON.stringify(DEMO_AGENT_SETTINGS, null, 2)}\n`);
  return path;
}
