/**
 * The conversation view's Context section (`turn/context`, docs/context.md): what the model saw in a turn, built by
 * the store's builder from the session (through the store worker) and the trace store (the extension's own, in the
 * same worker). The tokenizer runs here, loaded on the first request, never at activation.
 */
import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { buildTurnContext } from '../../store/context/turnContext';

export function contextRequests(s: Services): RequestsOf<'turn/context'> {
  const { traces } = s;
  return {
    'turn/context': (p, view) =>
      buildTurnContext(
        view.db(),
        { spansOfTurn: async (q) => (await traces.traces()).call('spansOfTurn', q) },
        { sessionId: view.target.sessionId, branchId: p.branchId, turn: p.turn },
      ),
  };
}
