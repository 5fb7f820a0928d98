/**
 * The agent-command runner loads no agent SDK (docs/architecture.md, `src/agents/command/`): the CLI bundles it with
 * `@openai/agents` external and ships without it. Lint checks the imports of `command/` itself; the shared steps it
 * calls (../runLocks.ts, ../branchOpening.ts, ../branchSettlement.ts, ../runWrites.ts, …) are checked here, by
 * bundling the runner as the CLI does and reading which packages the bundle still loads (type imports are erased).
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { REPO } from './commandKit';

/** The packages whose loading would make the CLI need an agent SDK. */
const AGENT_SDKS = /^(@openai\/agents(-[a-z]+)?|openai)(\/|$)/;

describe('the agent-command runner loads no agent SDK', () => {
  it('bundled as the CLI bundles it, it imports no @openai/agents and no openai at run time', async () => {
    const result = await esbuild.build({
      entryPoints: [join(REPO, 'src/agents/command/commandRun.ts')],
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
    // The shared steps are in the bundle: were they not, this test would check nothing of them.
    for (const shared of ['runLocks', 'branchOpening', 'branchSettlement', 'runWrites', 'runPersistence'])
      assert.ok(bundled.includes(`src/agents/${shared}.ts`), `${shared}.ts is not in the bundle: ${bundled.join(', ')}`);
    assert.deepEqual(
      [...loaded].filter((p) => AGENT_SDKS.test(p)),
      [],
    );
  });
});
