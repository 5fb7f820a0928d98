import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { turnPrompt } from './handOver';

/** The conversation view's request to hand a turn over to the chat. */
export function codingAgentRequests(s: Services): RequestsOf<'turn/askCopilot'> {
  return {
    // `opened` false when the prompt went to the clipboard instead (handOver.ts says so to the user).
    'turn/askCopilot': async (p, view) => ({
      opened: (await s.codingAgents.handOver.open(turnPrompt({ ...view.target, branchId: p.branchId, turn: p.turn }))).opened,
    }),
  };
}
