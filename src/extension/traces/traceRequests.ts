import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { linkTraceToTurn } from './traceLinking';
import { branchLatency } from './turnLatency';
import { turnTimeline } from './turnTimeline';

/** The conversation view's requests about traces: a turn's timeline, a branch's latency, linking a trace by hand. */
export function traceRequests(s: Services): RequestsOf<'turn/timeline' | 'branch/latency' | 'trace/link'> {
  const { traces } = s;
  return {
    'turn/timeline': (p, view) => turnTimeline(view.db(), traces, view.target.sessionId, p.branchId, p.turn),
    'branch/latency': async (p, view) => {
      const db = view.db();
      return branchLatency(db, traces, view.target.sessionId, p.branchId, await view.branches(db));
    },
    'trace/link': async (p, view) => ({ linked: await linkTraceToTurn(traces, view.target, p.branchId, p.turn) }),
  };
}
