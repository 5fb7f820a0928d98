/**
 * The replay table of a recorded turn: its tool calls in order, each with the output it got, read from the items of
 * that turn on its source branch (the same snapshot as the fork: `forkWithTurnItems`). Calls the provider ran (hosted
 * tools) are listed apart: their results come back inside the model's response, so no run can replay them. Calls the
 * agent's SDK runs on this machine (a local shell, apply_patch, computer use) are calls like function calls: listed,
 * matched, and refused in strict (replayedTools.ts). Handoffs are left out: no tool runs for them, and a run marks
 * none, so they are no step of the comparison either.
 */
import type { HostedCall, RecordedCall, ReplayTable } from '../../shared/protocol/replay';
import { isRecord, runValueText } from '../../shared/itemText';
import { callIdOf } from '../../shared/toolItems';
import { isJsShapedItem, toStoredItem } from '../../store/format/itemShape';
import type { AgentInputItem } from '@openai/agents';

/** Calls the provider runs inside its response: listed, never replayable. */
const HOSTED_TYPES = new Set(['web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call', 'mcp_call']);

/**
 * Calls the SDK runs on this machine, by their item type: the name their marks carry (the SDK's tool default name;
 * the call item names no tool), the field holding what was asked, and the output item answering them.
 */
export const LOCAL_CALLS: Record<string, { name: string; input: string; output: string }> = {
  shell_call: { name: 'shell', input: 'action', output: 'shell_call_output' },
  local_shell_call: { name: 'local_shell', input: 'action', output: 'local_shell_call_output' },
  apply_patch_call: { name: 'apply_patch', input: 'operation', output: 'apply_patch_call_output' },
  computer_call: { name: 'computer', input: 'action', output: 'computer_call_output' },
};
const LOCAL_OUTPUT_TYPES = new Set(Object.values(LOCAL_CALLS).map((c) => c.output));

const OUTPUT_TYPES = new Set(['function_call_output', 'function_call_result', ...LOCAL_OUTPUT_TYPES]);

/** A call's name with its namespace (`billing.refund`): tools of one name in two namespaces are two tools. */
export function qualifiedName(name: string, namespace: unknown): string {
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}.${name}` : name;
}

/**
 * What a local call asked, as JSON text compared like function arguments: null fields dropped, since the file's shape
 * writes an unset field as `null` (`timeout_ms`) where the SDK's leaves it out.
 */
export function localCallArguments(input: unknown): string {
  const strip = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(strip)
      : isRecord(v)
        ? Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (x === null || x === undefined ? [] : [[k, strip(x)]])))
        : v;
  return JSON.stringify(strip(input ?? {})) ?? '{}';
}

/** The SDK's handoff output (`{"assistant": "<agent name>"}`): the call was a handoff, not a tool. */
function isHandoffOutput(output: unknown): boolean {
  if (typeof output !== 'string') return false;
  try {
    const v: unknown = JSON.parse(output);
    return isRecord(v) && Object.keys(v).length === 1 && typeof v.assistant === 'string';
  } catch {
    return false;
  }
}

/** The table of `items` (a turn's stored items, oldest first), recorded on `branchId` at `turn`. */
export function buildReplayTable(items: readonly unknown[], where: { branchId: string; turn: number }): ReplayTable {
  const calls: RecordedCall[] = [];
  const hosted: HostedCall[] = [];
  const byId = new Map<string, RecordedCall>();
  for (const raw of items) {
    // A row in the JS SDK's shape (written by older versions) is read as the SDK reads it back: its output as the
    // Responses shape the model got (`{type: 'text', text}` is the text).
    const item = isJsShapedItem(raw) ? (toStoredItem(raw as AgentInputItem) as unknown) : raw;
    if (!isRecord(item) || typeof item.type !== 'string') continue;
    const local = LOCAL_CALLS[item.type];
    if (item.type === 'function_call' || local) {
      const callId = callIdOf(item) ?? `(no id ${calls.length + 1})`;
      const call: RecordedCall = {
        callId,
        name: local ? local.name : qualifiedName(typeof item.name === 'string' ? item.name : 'tool', item.namespace),
        // As stored: a string in every file the SDKs write; anything else as its JSON text, so it can still match.
        arguments: local
          ? localCallArguments(item[local.input] ?? item.actions)
          : typeof item.arguments === 'string'
            ? item.arguments
            : runValueText(item.arguments ?? ''),
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
        // An apply_patch result is its status and its text; every other output is the item's `output`.
        call.output =
          item.type === 'apply_patch_call_output'
            ? { status: item.status ?? 'completed', output: item.output ?? '' }
            : (item.output ?? null);
        call.hasOutput = true;
      }
    } else if (HOSTED_TYPES.has(item.type))
      hosted.push({ type: item.type, callId: callIdOf(item) ?? (typeof item.id === 'string' ? item.id : null) });
  }
  // Handoffs: a call answered by the SDK's transfer message. No tool runs for one, so a run never marks it.
  return { branchId: where.branchId, turn: where.turn, calls: calls.filter((c) => !isHandoffOutput(c.output)), hosted };
}
