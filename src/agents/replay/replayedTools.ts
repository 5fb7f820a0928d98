/**
 * The SDK side of replay: an agent whose function tools (its own and its MCP servers') ask the run's matcher before
 * they run. A replayed call returns the recorded output and the tool is never invoked; a live one runs as before; in
 * `strict` an unmatched call throws before the tool runs, which fails the run. The user's agent is not changed: a
 * clone gets the wrapped tools (the same agent serves other runs at once, and the extension caches it).
 */
import { Agent, getCurrentSpan, type FunctionTool, type RunContext, type Tool } from '@openai/agents';
import type { ReplayMatcher } from './replayMatcher';

/** The recorded outputs handed to the SDK for replayed calls, by the new call's id (the session write uses them). */
export type ReplayedOutputs = Map<string, unknown>;

/**
 * Notes the outcome on the SDK's function span of this call (the one around `invoke`), so the timeline can mark a
 * replayed call: spans carry no call id, and this is the span of exactly this call. Nothing when tracing is off.
 */
function markSpan(outcome: string): void {
  const span = getCurrentSpan();
  const data = span?.spanData as { type?: unknown; agent_sessions_replay?: string } | undefined;
  if (data?.type === 'function') data.agent_sessions_replay = outcome;
}

/** A function tool that asks `matcher` first. Every other property is the tool's own (through its prototype). */
function replayedTool(tool: FunctionTool, matcher: ReplayMatcher, outputs: ReplayedOutputs): FunctionTool {
  const wrapped = Object.create(tool) as FunctionTool;
  wrapped.invoke = async (runContext, input, details) => {
    const callId = details?.toolCall?.callId ?? `${tool.name}#${matcher.marks.length + 1}`;
    let decision: ReturnType<ReplayMatcher['decide']>;
    try {
      decision = matcher.decide(callId, tool.name, input);
    } catch (err) {
      markSpan('unmatched');
      throw err;
    }
    markSpan(decision.outcome === 'replayed' ? `replayed ${decision.recorded.callId}` : 'live');
    if (decision.outcome === 'live') return tool.invoke(runContext, input, details);
    const output = decision.recorded.output;
    outputs.set(callId, output);
    // The SDK turns a string into the output item unchanged, and content parts given as its tool outputs into the
    // parts the model saw then; anything else reaches the model as its JSON text. Whatever the SDK made of it, the
    // output item is written exactly as recorded (RecordingSession's rewrite).
    return typeof output === 'string' ? output : (sdkToolOutput(output) ?? JSON.stringify(output));
  };
  return wrapped;
}

/**
 * A recorded list of text and image parts (the Responses API's `input_text`, `input_image`) as the tool outputs the
 * SDK sends back as those parts; null when any part is something else (a file, a key the SDK would drop), so that a
 * part is never lost silently: the whole output then goes as text.
 */
export function sdkToolOutput(output: unknown): unknown[] | null {
  if (!Array.isArray(output) || output.length === 0) return null;
  const parts: unknown[] = [];
  for (const part of output) {
    if (part === null || typeof part !== 'object') return null;
    const { type, text, image_url, file_id, detail, ...rest } = part as Record<string, unknown>;
    if (Object.keys(rest).length > 0) return null;
    if (type === 'input_text' && typeof text === 'string' && image_url === undefined && file_id === undefined && detail === undefined)
      parts.push({ type: 'text', text });
    else if (type === 'input_image' && text === undefined && (detail === undefined || typeof detail === 'string')) {
      const image =
        typeof image_url === 'string' && file_id === undefined
          ? image_url
          : typeof file_id === 'string' && image_url === undefined
            ? { fileId: file_id }
            : null;
      if (image === null) return null;
      parts.push({ type: 'image', image, ...(detail !== undefined ? { detail } : {}) });
    } else return null;
  }
  return parts;
}

function wrapTools(tools: readonly Tool[], matcher: ReplayMatcher, outputs: ReplayedOutputs): Tool[] {
  return tools.map((t) => (t.type === 'function' ? replayedTool(t as FunctionTool, matcher, outputs) : t));
}

/**
 * A clone of `agent` (and of the agents it hands off to) whose function tools replay through `matcher`. Handoffs
 * given as `handoff(...)` objects keep their agent's tools live (their agent is built by the SDK at run time).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent: its context and output types do not matter here
type AnyAgent = Agent<any, any>;

export function withReplayedTools<T extends AnyAgent>(agent: T, matcher: ReplayMatcher, outputs: ReplayedOutputs): T {
  const seen = new Map<AnyAgent, AnyAgent>();
  const wrap = (a: AnyAgent): AnyAgent => {
    const known = seen.get(a);
    if (known) return known;
    const clone = a.clone({});
    seen.set(a, clone);
    clone.handoffs = a.handoffs.map((h) => (h instanceof Agent ? wrap(h) : h));
    const allTools = clone.getAllTools.bind(clone);
    clone.getAllTools = async (runContext: RunContext<unknown>, ...rest: unknown[]) =>
      wrapTools(await (allTools as (...args: unknown[]) => Promise<Tool[]>)(runContext, ...rest), matcher, outputs);
    return clone;
  };
  return wrap(agent) as T;
}
