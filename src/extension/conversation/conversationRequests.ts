import * as vscode from 'vscode';
import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { itemView, sessionView, toolsView, turnPage } from './conversationData';

/** The conversation view's reads of the session itself: its header and branches, turn pages, a turn's items, tool totals. */
export function conversationRequests(s: Services): RequestsOf<'session/get' | 'turns/get' | 'turn/items' | 'tools/get'> {
  const { registry } = s;
  return {
    'session/get': async (_p, view) => {
      const { dbPath, sessionId } = view.target;
      const entry = registry.get(dbPath);
      const db = view.reader();
      try {
        return await sessionView({
          db,
          dbPath,
          dbName: entry?.remote ? dbPath : undefined,
          sessionId,
          readonly: entry?.readonly ?? true,
          currentBranch: registry.currentBranch(dbPath, sessionId),
          branchTree: async () => (db ? view.branches(db) : []),
          problem: entry ? entry.problem : vscode.l10n.t('{0} is not open.', dbPath),
        });
      } catch (err) {
        // The file became unreadable under us: record it (its change event tells the view) and say why now.
        registry.reportProblem(dbPath, err);
        throw err;
      }
    },
    'turns/get': async (p, view) => {
      const db = view.db();
      return turnPage(db, view.target.sessionId, p, await view.branches(db));
    },
    'turn/items': async (p, view) => (await view.db().getTurnItems(view.target.sessionId, p.branchId, p.turn)).map(itemView),
    // Tool totals are the session's rows: answered here and by the store, with no price involved.
    'tools/get': (p, view) => toolsView(view.db(), view.target.sessionId, p.branchId),
  };
}
