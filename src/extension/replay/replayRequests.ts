/**
 * The conversation view's replay requests (docs/replay.md): `replay/table`, the recorded calls of a turn that the
 * what-if form previews, read from the session as it is now (the run reads its own table again with the fork), and
 * `replay/marks`, a branch's marks from the replay marks store.
 */
import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { replayTableView } from './replayRecords';

export function replayRequests(s: Services): RequestsOf<'replay/table' | 'replay/marks'> {
  return {
    'replay/table': async (p, view) => {
      const entries = await view.db().getTurnItems(view.target.sessionId, p.branchId, p.turn);
      return replayTableView(entries, { branchId: p.branchId, turn: p.turn }, s.replay.defaults());
    },
    'replay/marks': (p, view) => s.replay.marks(view.target.dbPath, view.target.sessionId, p.branchId),
  };
}
