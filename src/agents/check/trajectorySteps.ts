/**
 * The trajectory a check grades (docs/check.md, "Graders"): every call a turn made, in the order it was stored —
 * function calls and custom tools, and the calls the provider or the SDK ran itself (MCP, web and file search, code
 * interpreter, shell, computer, image generation, apply_patch, tool search, the JS SDK's `hosted_tool_call`). The
 * replay table lists only what a run can replay; a check that compared only those passed a run that added, or left
 * out, a refund through an MCP server. Read from the items here, not from the replay table, so that what the check
 * grades does not move with what replay can do.
 *
 * A step's name is the tool's name for a function or custom tool call (as the SDKs call the tool), and otherwise the
 * item's type, with the server and tool for MCP (`mcp_call billing.issue_refund`): a function's name has no space, so
 * the two never meet. Its arguments are what the item asked for (a function's arguments, an MCP call's arguments, a
 * custom tool's input, a computer or shell call's action, a search's query, the code run), as JSON text.
 */
import { isRecord, runValueText } from '../../shared/itemText';
import { callIdOf } from '../../shared/toolItems';

export interface TrajectoryStep {
  name: string;
  arguments: string;
  /** What the call got back: its output item's output, or the output the item holds (MCP); null when none. */
  output: unknown;
}

/** Items that call something: every type the SDKs and the Responses API name `…_call`. */
const isCallType = (type: string): boolean => type.endsWith('_call');
/** Items that answer a call by its call id. */
const isOutputType = (type: string): boolean => type.endsWith('_call_output') || type.endsWith('_call_result');

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What a call asked for, as text: the first of the fields the call types keep it in. */
function argumentsOf(item: Record<string, unknown>): string {
  for (const key of ['arguments', 'input', 'action', 'operation', 'queries', 'code']) {
    const v = item[key];
    if (v === undefined || v === null) continue;
    return typeof v === 'string' ? v : runValueText(v);
  }
  return '';
}

/** The step of one call item (a hosted tool call of the JS SDK as the item it stands for, when it kept it). */
function stepOf(item: Record<string, unknown>, type: string): Omit<TrajectoryStep, 'output'> {
  if (type === 'function_call' || type === 'custom_tool_call')
    // As stored (a string in every file the SDKs write), as the replay table reads it.
    return { name: text(item.name) ?? 'tool', arguments: runValueText(type === 'function_call' ? item.arguments : item.input) };
  if (type === 'hosted_tool_call') {
    const raw = isRecord(item.providerData) ? item.providerData : undefined;
    if (raw && typeof raw.type === 'string' && isCallType(raw.type) && raw.type !== 'hosted_tool_call') return stepOf(raw, raw.type);
    const what = text(item.name);
    const inner = what === undefined ? 'hosted_tool_call' : what.endsWith('_call') ? what : `${what}_call`;
    return { name: inner, arguments: argumentsOf(item) };
  }
  if (type === 'mcp_call') {
    const tool = [text(item.server_label) ?? text(item.serverLabel), text(item.name)].filter((p) => p !== undefined).join('.');
    return { name: tool === '' ? type : `${type} ${tool}`, arguments: argumentsOf(item) };
  }
  return { name: type, arguments: argumentsOf(item) };
}

/** The turn's calls in order, each with what it got back (`items`: a turn's stored items, oldest first). */
export function trajectorySteps(items: readonly unknown[]): TrajectoryStep[] {
  const steps: TrajectoryStep[] = [];
  const byId = new Map<string, TrajectoryStep>();
  const answered = new Set<TrajectoryStep>();
  for (const item of items) {
    if (!isRecord(item) || typeof item.type !== 'string') continue;
    const type = item.type;
    if (isCallType(type)) {
      const own = item.output;
      const step: TrajectoryStep = { ...stepOf(item, type), output: own === undefined ? null : own };
      steps.push(step);
      const id = callIdOf(item) ?? (type === 'local_shell_call' ? text(item.id) : undefined);
      if (id !== undefined && !byId.has(id)) byId.set(id, step);
    } else if (isOutputType(type)) {
      const step = byId.get(callIdOf(item) ?? '');
      // The first output answers the call, as replay takes it.
      if (step && !answered.has(step)) {
        step.output = item.output ?? null;
        answered.add(step);
      }
    }
  }
  return steps;
}
