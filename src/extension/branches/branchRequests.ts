import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { createBranch, deleteBranch, switchBranch } from './branchActions';

/** The conversation view's branch requests: the same actions as the tree's commands (branchActions.ts). */
export function branchRequests(s: Services): RequestsOf<'branch/create' | 'branch/switch' | 'branch/delete'> {
  const { registry } = s;
  return {
    'branch/create': async (p, view) => ({
      branchId: await createBranch(registry, view.target, p.fromBranchId, { turn: p.branchTurnNumber }, p.name),
    }),
    'branch/switch': async (p, view) => {
      await switchBranch(registry, view.target, p.branchId);
      return { branchId: p.branchId };
    },
    // The host asks for confirmation; `deleted` is false when the user declined.
    'branch/delete': async (p, view) => {
      const deleted = await deleteBranch(registry, view.target, p.branchId);
      // Its replay marks go with it (docs/replay.md): nothing can show them any more.
      if (deleted) await s.replay.forgetBranch(view.target.dbPath, view.target.sessionId, p.branchId);
      return { deleted };
    },
  };
}
