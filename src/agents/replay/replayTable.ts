/**
 * The replay table of a recorded turn: its function calls in order, each with the output it got, read from the items
 * of that turn on its source branch (the same snapshot as the fork: `forkWithTurnItems`). Calls the provider ran
 * (hosted tools) are listed apart: their results come back inside the model's response, so no run can replay them.
 */
import type { HostedCall, RecordedCall, ReplayTable } from '../../shared/protocol/replay';
import { isRecord, runValueText } from '../../shared/itemText';
import { callIdOf } from '../../shared/toolItems';

/** Calls the provider runs inside its response: listed, never replayable. */
const HOSTED_TYPES = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'computer_call',
  'image_generation_call',
  'mcp_call',
  'local_shell_call',
  'shell_call',
]);

const OUTPUT_TYPES = new Set(['function_call_output', 'function_call_result']);

/** The table of `items` (a turn's stored items, oldest first), recorded on `branchId` at `turn`. */
export function buildReplayTable(items: readonly unknown[], where: { branchId: string; turn: number }): ReplayTable {
  const calls: RecordedCall[] = [];
  const hosted: HostedCall[] = [];
  const byId = new Map<string, RecordedCall>();
  for (const item of items) {
    if (!isRecord(item) || typeof item.type !== 'string') continue;
    if (item.type === 'function_call') {
      const callId = callIdOf(item) ?? `(no id ${calls.length + 1})`;
      const call: RecordedCall = {
        callId,
        name: typeof item.name === 'string' ? item.name : 'tool',
        // As stored: a string in every file the SDKs write; anything else as its JSON text, so it can still match.
        arguments: typeof item.arguments === 'string' ? item.arguments : runValueText(item.arguments ?? ''),
        output: null,
        hasOutput: false,
        branchId: where.branchId,
        turn: where.turn,
      };
      calls.push(call);
      if (!byId.has(callId)) byId.set(callId, call);
    } else if (OUTPUT_TYPES.has(item.type)) {
      const call = byId.get(callIdOf(item) ?? '');
      // The first output answers the call; a second one for the same id is not what the model saw as its answer.
      if (call && !call.hasOutput) {
        call.output = item.output ?? null;
        call.hasOutput = true;
      }
    } else if (HOSTED_TYPES.has(item.type))
      hosted.push({ type: item.type, callId: callIdOf(item) ?? (typeof item.id === 'string' ? item.id : null) });
  }
  return { branchId: where.branchId, turn: where.turn, calls, hosted };
}
