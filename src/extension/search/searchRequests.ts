import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { searchShownSession } from './viewSearch';

/** The conversation view's search of its session (viewSearch.ts); review filters read the session store's reviews. */
export function searchRequests(s: Services): RequestsOf<'search/session'> {
  const { context, registry, reviews } = s;
  return {
    'search/session': (p, view) =>
      searchShownSession(context.extensionUri, registry, view.target, p.branchId, p.query, (review) =>
        reviews.turnSet(view.target.dbPath, review),
      ),
  };
}
