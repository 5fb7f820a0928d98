import { randomUUID } from 'node:crypto';
import { CommandId, Setting } from '../core/contributions';
import { reported } from '../core/commandTable';
import { setting } from '../core/settings';
import type { RequestsOf } from '../core/viewRequests';
import { compareBranches } from '../compare/compareCommands';
import type { Services } from '../services';
import { readWhatIfModels } from './agentRunner';
import { setApiKey } from './runCommands';
import { startReportedViewRun, startViewWhatIf } from './viewRuns';

/** The conversation view's requests about agent runs: the composer, Stop, the API key, what-ifs, the agent picker. */
export function runRequests(
  s: Services,
): RequestsOf<'run/start' | 'run/stop' | 'apiKey/set' | 'whatIf/models' | 'whatIf/start' | 'agents/get' | 'agents/select'> {
  const { registry, runner } = s;
  return {
    'run/start': async (p, view) => {
      // What is knowable before the run (a key, a writable file) is refused here, as the request's error: the view
      // shows it under the composer and nothing starts. Later failures reach the view as run/failed events.
      await runner.checkCanStart(view.target.dbPath, p.agent);
      const runId = randomUUID();
      void startReportedViewRun(runner, view, p.branchId, p.input, runId, {
        ...(p.agent !== undefined ? { agent: p.agent } : {}),
        ...(p.tools !== undefined ? { tools: { mode: p.tools } } : {}),
      });
      return { runId };
    },
    'run/stop': (p) => ({ stopped: runner.stop(p.runId) }),
    'apiKey/set': async () => ({ set: (await reported(CommandId.setApiKey, () => setApiKey(s))) === true }),
    'whatIf/models': () => ({ configured: setting(Setting.agentModel), choices: readWhatIfModels() }),
    'whatIf/start': async (p, view) => {
      const { runs, done } = await startViewWhatIf(
        registry,
        runner,
        view,
        { ...view.target, branchId: p.branchId, turn: p.turn, branchTurnNumber: p.branchTurnNumber },
        {
          kind: p.editedText === null ? 'retry' : 'edit',
          editedText: p.editedText ?? undefined,
          models: p.models,
          ...(p.agent !== undefined ? { agent: p.agent } : {}),
          ...(p.tools !== undefined ? { tools: p.tools } : {}),
        },
        // When every run ended: the original and each completed retry side by side.
        (targets) => void compareBranches(s, targets),
      );
      void done;
      return { runs };
    },
    'agents/get': () => runner.choices.view(),
    'agents/select': async (p) => {
      await runner.choices.select(p.id);
      return runner.choices.view();
    },
  };
}
