import { CommandId } from '../core/contributions';
import { reported } from '../core/commandTable';
import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { compareWith } from './compareCommands';

/** The conversation view's *Compare with…*: the command's own steps, its failure reported as the command's. */
export function compareRequests(s: Services): RequestsOf<'branch/compare'> {
  return {
    'branch/compare': async (p, view) => ({
      opened: (await reported(CommandId.compareWith, () => compareWith(s, { ...view.target, branchId: p.branchId }))) !== undefined,
    }),
  };
}
