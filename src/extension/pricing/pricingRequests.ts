import type { RequestsOf } from '../core/viewRequests';
import { tables } from '../conversation/conversationData';
import type { Services } from '../services';
import { turnLatencies, withLatency } from '../traces/turnLatency';
import { withCosts } from './pricedTables';
import { choosePricingModel } from './pricingChoice';

/** The conversation view's Tokens tab (usage priced at the session's model, with latency) and its pricing model. */
export function pricingRequests(s: Services): RequestsOf<'tables/get' | 'pricing/choose'> {
  const { pricing, traces } = s;
  return {
    'tables/get': async (p, view) => {
      const db = view.db();
      const { sessionId } = view.target;
      const tablesView = await tables(db, sessionId, p.branchId, await view.branches(db), p.usage);
      const priced = withCosts(tablesView, pricing.pricingFor(view.target));
      return withLatency(priced, (turns) => turnLatencies(db, traces, sessionId, turns));
    },
    'pricing/choose': async (_p, view) => {
      const model = await choosePricingModel(pricing, view.target);
      return { model: model === undefined ? null : model };
    },
  };
}
