import { CommandId } from '../core/contributions';
import { reported } from '../core/commandTable';
import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { exportConversation, reviewDataOf } from './transferCommands';

/** The conversation view's *Export Branch…* (`branchId`) and *Export Session…* (null), from the header's menu. */
export function transferRequests(s: Services): RequestsOf<'branch/export'> {
  return {
    // The export reports its own failures and cancellations; the answer only says whether a file was written.
    'branch/export': async (p, view) => {
      const target = view.target;
      const branchId = p.branchId;
      const exported = await reported(branchId === null ? CommandId.exportSession : CommandId.exportBranch, () =>
        exportConversation(
          s.registry,
          branchId === null ? 'session' : 'branch',
          branchId === null ? { kind: 'session', ...target } : { kind: 'branch', ...target, branchId },
          undefined,
          reviewDataOf(s),
        ),
      );
      return { exported: exported !== undefined };
    },
  };
}
