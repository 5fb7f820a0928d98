/**
 * `agent-sessions check` loads no agent SDK (docs/architecture.md, `src/agents/check/`): the CLI bundles the check
 * with `@openai/agents` external and ships without it. Lint checks the imports of `check/` itself; what it calls in
 * the rest of src/agents (../whatIfInput.ts, ../replay/*, the command runner's shared steps) is checked here, by
 * bundling the CLI's check command as the CLI does and reading which packages the bundle still loads.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { REPO } from '../command/commandKit';

/**
 * The agent SDK, which the CLI's bundle leaves out (scripts/store-package/cliBuild.mjs). `openai` is not one of them
 * here: the model grader loads it on its first judgement, and the CLI bundles it.
 */
const AGENT_SDKS = /^@openai\/agents(-[a-z]+)?(\/|$)/;

describe('the check loads no agent SDK', () => {
  it('bundled as the CLI bundles it, it imports no @openai/agents and no openai at run time', async () => {
    const result = await esbuild.build({
      entryPoints: [join(REPO, 'src/cli/checkCommand.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      write: false,
      metafile: true,
      outdir: 'out',
      logLevel: 'silent',
      absWorkingDir: REPO,
    });
    const loaded = new Set(Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)));
    const bundled = Object.keys(result.metafile.inputs);
    for (const part of [
      'check/checkCases',
      'check/scratchStore',
      'check/checkRun',
      'whatIfInput',
      'replay/replayTable',
      'command/commandRun',
    ])
      assert.ok(bundled.includes(`src/agents/${part}.ts`), `${part}.ts is not in the bundle: ${bundled.join(', ')}`);
    assert.deepEqual(
      [...loaded].filter((p) => AGENT_SDKS.test(p)),
      [],
    );
  });
});
