/** `agent-sessions search`: waits for the search core (issue 15's search helper); until then it says so. */
import type { CommandContext } from './commands';

export class NotYetError extends Error {}

export async function searchCommand(
  _ctx: CommandContext,
  _db: string | undefined,
  _query: string,
  _max: number | undefined,
): Promise<string> {
  throw new NotYetError('search is not available yet in this build');
}
