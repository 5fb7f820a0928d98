/**
 * The SDK side of replay: an agent whose tools ask the run's matcher before they run — its function tools (its own and
 * its MCP servers'), and the tools the SDK runs on this machine (a local shell, apply_patch, computer use), in the
 * agent and in every agent it hands off to, whether given as an `Agent` or through `handoff(...)`. A replayed call
 * returns the recorded output and the tool is never invoked; a live one runs as before; in `strict` an unmatched call
 * throws before the tool runs, which fails the run. The user's agents are not changed: clones get the wrapped tools
 * (the same agent serves other runs at once, and the extension caches it).
 *
 * The model's responses are watched too (`replayedModel`): each response's calls get their recorded calls in the
 * order the model wrote them, before the SDK reaches any of their tools, which it may do in another order.
 */
import {
  Agent,
  getCurrentSpan,
  getHandoff,
  Handoff,
  type ApplyPatchTool,
  type ComputerTool,
  type FunctionTool,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type RunContext,
  type ShellTool,
  type Tool,
} from '@openai/agents';
import { isRecord } from '../../shared/itemText';
import { toStoredItem } from '../../store/format/itemShape';
import type { ModelCall, ReplayMatcher } from './replayMatcher';
import { localCallArguments, qualifiedName } from './replayTable';
import { parseArguments } from '../../shared/compare/toolArguments';

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

/** What one run's wrappers share: the matcher, the outputs replayed, and what the model's responses need to know. */
export class ReplayWiring {
  /** The wrappers of the tools run on this machine, by the user's tool. */
  readonly localTools = new WeakMap<Tool, Tool>();
  /** The handoff tools' names of every agent of the run: their calls are no tool calls. */
  readonly handoffNames = new Set<string>();
  /** The function tools given to the model in the current turn, by name: a response's invalid JSON hides their schema. */
  private current = new Map<string, WrappedFunction[]>();

  constructor(
    readonly matcher: ReplayMatcher,
    readonly outputs: ReplayedOutputs,
  ) {}

  /**
   * The tools of a new turn, each a new wrapper showing its schema (the SDK serializes them for the model right after):
   * a schema hidden for the last response stays hidden for the calls of that response only.
   */
  turnTools(tools: WrappedFunction[]): void {
    this.current = new Map();
    for (const w of tools) this.current.set(w.tool.name, [...(this.current.get(w.tool.name) ?? []), w]);
  }

  /** A model response's output: its calls planned in order, and tools whose calls are not JSON readied for them. */
  response(output: readonly unknown[]): void {
    const calls: ModelCall[] = [];
    for (const item of output) {
      if (!isRecord(item) || typeof item.callId !== 'string') continue;
      if (item.type === 'function_call' && typeof item.name === 'string') {
        if (this.handoffNames.has(item.name) && item.namespace === undefined) continue;
        const args = typeof item.arguments === 'string' ? item.arguments : '';
        calls.push({ callId: item.callId, name: qualifiedName(item.name, item.namespace), arguments: args });
        // The SDK parses a function tool's arguments against its schema before the tool is invoked, and answers text
        // that is not JSON with a parse error of its own: replay would never see the call. Without a schema it passes
        // the text through, so for this response the tool shows none, and the call reaches the matcher, compared as
        // text (docs/replay.md, "Bad input"). A live call then fails in the tool's own parsing, as it would have.
        if (!parseArguments(args).json) for (const w of this.current.get(item.name) ?? []) w.hideSchema = true;
      } else if (item.type === 'shell_call' || item.type === 'apply_patch_call' || item.type === 'computer_call')
        calls.push({ callId: item.callId, name: localName(item.type), arguments: localArgumentsOf(item) });
    }
    this.matcher.plan(calls);
  }
}

type WrappedFunction = FunctionTool & { tool: FunctionTool; hideSchema: boolean };

const LOCAL_NAMES: Record<string, string> = { shell_call: 'shell', apply_patch_call: 'apply_patch', computer_call: 'computer' };
function localName(type: string): string {
  return LOCAL_NAMES[type] ?? type;
}

/** A local call's input in the file's shape (the recording's), as the text its matching compares. */
function localArgumentsOf(item: Record<string, unknown>): string {
  const stored = toStoredItem({ ...item, status: item.status ?? 'completed' } as never) as unknown as Record<string, unknown>;
  return localCallArguments(item.type === 'apply_patch_call' ? stored.operation : (stored.action ?? stored.actions));
}

/**
 * A model whose responses are planned before the SDK acts on them. Everything else is the model's own.
 */
function replayedModel(model: Model, wiring: ReplayWiring): Model {
  const wrapped = Object.create(model) as Model;
  wrapped.getResponse = async (request: ModelRequest): Promise<ModelResponse> => {
    const response = await model.getResponse(request);
    wiring.response(response.output);
    return response;
  };
  wrapped.getStreamedResponse = async function* (request: ModelRequest) {
    for await (const event of model.getStreamedResponse(request)) {
      const e = event as { type?: unknown; response?: { output?: unknown } };
      if (e.type === 'response_done' && Array.isArray(e.response?.output)) wiring.response(e.response.output);
      yield event;
    }
  };
  return wrapped;
}

/** A model provider whose models are planned (for agents whose model is a name). */
export function replayedProvider(provider: ModelProvider, wiring: ReplayWiring): ModelProvider {
  const wrapped = Object.create(provider) as ModelProvider;
  wrapped.getModel = async (name?: string) => replayedModel(await provider.getModel(name), wiring);
  return wrapped;
}

/** A function tool that asks `matcher` first. Every other property is the tool's own (through its prototype). */
function replayedTool(tool: FunctionTool, wiring: ReplayWiring): WrappedFunction {
  const { matcher, outputs } = wiring;
  const wrapped = Object.create(tool) as WrappedFunction;
  wrapped.tool = tool;
  wrapped.hideSchema = false;
  Object.defineProperty(wrapped, 'parameters', {
    get: () => (wrapped.hideSchema ? undefined : tool.parameters),
    enumerable: true,
    configurable: true,
  });
  wrapped.invoke = async (runContext, input, details) => {
    const call = details?.toolCall as { callId?: string; namespace?: unknown } | undefined;
    const callId = call?.callId ?? `${tool.name}#${matcher.marks.length + 1}`;
    let decision: ReturnType<ReplayMatcher['decide']>;
    try {
      decision = matcher.decide(callId, qualifiedName(tool.name, call?.namespace), input);
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

/** A recorded shell output (the file's `exit_code`) as the SDK's shell result (`exitCode`). */
function shellResult(output: unknown): { output: unknown[] } {
  return {
    output: (Array.isArray(output) ? output : []).map((o: unknown) => {
      const entry = isRecord(o) ? o : {};
      const outcome = isRecord(entry.outcome) ? entry.outcome : {};
      return {
        stdout: typeof entry.stdout === 'string' ? entry.stdout : '',
        stderr: typeof entry.stderr === 'string' ? entry.stderr : '',
        outcome:
          outcome.type === 'timeout'
            ? { type: 'timeout' }
            : { type: 'exit', exitCode: typeof outcome.exit_code === 'number' ? outcome.exit_code : null },
      };
    }),
  };
}

/**
 * A tool the SDK runs on this machine, asking the matcher first. The SDK asks such a tool's `needsApproval` with the
 * call's id before it runs it (and lets what it throws fail the run), so that is where the call is decided; the
 * shell's `run` and the editor's methods then get the decision by the call's input, the same object. A shell command
 * or a patch recorded with its output is replayed; a computer action is not (its effect is on a screen the recording
 * cannot give back): it runs live in `replay` and is refused in `strict`.
 */
function replayedLocalTool(tool: ShellTool | ApplyPatchTool | ComputerTool, wiring: ReplayWiring): Tool {
  const { matcher } = wiring;
  const kind = tool.type === 'shell' ? 'shell_call' : tool.type === 'apply_patch' ? 'apply_patch_call' : 'computer_call';
  const decisions = new WeakMap<object, ReturnType<ReplayMatcher['decide']>>();
  const decide = (input: unknown, callId: string | undefined): ReturnType<ReplayMatcher['decide']> => {
    const field = kind === 'apply_patch_call' ? 'operation' : 'action';
    const id = callId ?? `${tool.name}#${matcher.marks.length + 1}`;
    const args = localArgumentsOf({ type: kind, callId: id, [field]: input });
    const decision = matcher.decide(id, localName(kind), args, kind !== 'computer_call');
    if (input !== null && typeof input === 'object') decisions.set(input, decision);
    return decision;
  };
  const decisionOf = (input: unknown) =>
    (input !== null && typeof input === 'object' ? decisions.get(input) : undefined) ?? decide(input, undefined);
  const own = tool.needsApproval as unknown;
  const needsApproval = async (runContext: RunContext<unknown>, input: unknown, callId?: string): Promise<boolean> => {
    decide(input, callId);
    if (typeof own === 'function') return (await (own as (...a: unknown[]) => Promise<boolean>)(runContext, input, callId)) === true;
    return own === true;
  };
  if (tool.type === 'shell') {
    const shell = tool.shell;
    // A hosted shell is run by the provider: nothing here to ask.
    if (!shell) return tool;
    return {
      ...tool,
      needsApproval,
      shell: {
        ...shell,
        run: async (action: Parameters<typeof shell.run>[0]) => {
          const d = decisionOf(action);
          return (d.outcome === 'replayed' ? shellResult(d.recorded.output) : shell.run(action)) as ReturnType<typeof shell.run>;
        },
      },
    } as Tool;
  }
  if (tool.type === 'apply_patch') {
    const editor = tool.editor;
    const replayed = (method: 'createFile' | 'updateFile' | 'deleteFile') =>
      (async (operation: unknown, context: unknown) => {
        const d = decisionOf(operation);
        if (d.outcome !== 'replayed') return (editor[method] as (...a: unknown[]) => unknown).call(editor, operation, context);
        const recorded = isRecord(d.recorded.output) ? d.recorded.output : {};
        return {
          status: recorded.status === 'failed' ? 'failed' : 'completed',
          output: typeof recorded.output === 'string' ? recorded.output : '',
        };
      }) as never;
    return {
      ...tool,
      needsApproval,
      editor: { createFile: replayed('createFile'), updateFile: replayed('updateFile'), deleteFile: replayed('deleteFile') },
    } as Tool;
  }
  return { ...tool, needsApproval } as Tool;
}

function wrapTools(tools: readonly Tool[], wiring: ReplayWiring): Tool[] {
  const functions: WrappedFunction[] = [];
  const wrapped = tools.map((t) => {
    if (t.type === 'function') {
      const w = replayedTool(t as FunctionTool, wiring);
      functions.push(w);
      return w;
    }
    if (t.type === 'shell' || t.type === 'apply_patch' || t.type === 'computer') {
      // One wrapper per tool for the whole run: the SDK keys a computer's instance by its tool object, so a new
      // wrapper each turn would start a new computer each turn.
      let w = wiring.localTools.get(t);
      if (!w) wiring.localTools.set(t, (w = replayedLocalTool(t, wiring)));
      return w;
    }
    return t;
  });
  wiring.turnTools(functions);
  return wrapped;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent: its context and output types do not matter here
type AnyAgent = Agent<any, any>;

/**
 * A clone of `agent` and of every agent it hands off to (given as `Agent`s or `Handoff`s, whose agent the SDK takes
 * from `onInvokeHandoff` at run time), each cloned once, whose tools and model go through `wiring`.
 */
export function withReplayedTools<T extends AnyAgent>(agent: T, wiring: ReplayWiring): T {
  const seen = new Map<AnyAgent, AnyAgent>();
  const wrap = (a: AnyAgent): AnyAgent => {
    const known = seen.get(a);
    if (known) return known;
    const clone = a.clone({});
    seen.set(a, clone);
    if (typeof a.model === 'object' && a.model !== null) clone.model = replayedModel(a.model, wiring);
    clone.handoffs = a.handoffs.map((h) => {
      if (h instanceof Agent) {
        wiring.handoffNames.add(getHandoff(h).toolName);
        return wrap(h);
      }
      if (!(h instanceof Handoff)) return h;
      wiring.handoffNames.add(h.toolName);
      const target = h.agent instanceof Agent ? wrap(h.agent) : h.agent;
      return h.clone({
        agent: target,
        // The agent the SDK runs next is the one this returns: the user's own, which is wrapped here too.
        onInvokeHandoff: async (context: RunContext<unknown>, args: string) => {
          const next = await h.onInvokeHandoff(context, args);
          return next instanceof Agent ? wrap(next) : next;
        },
      } as never);
    });
    const allTools = clone.getAllTools.bind(clone);
    clone.getAllTools = async (runContext: RunContext<unknown>, ...rest: unknown[]) =>
      wrapTools(await (allTools as (...args: unknown[]) => Promise<Tool[]>)(runContext, ...rest), wiring);
    return clone;
  };
  return wrap(agent) as T;
}
