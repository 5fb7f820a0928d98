/**
 * Replay recorded tool results in your `@openai/agents` agent, for Agent Session Inspector's agent commands.
 *
 * When the extension re-runs a recorded turn (Retry from Here, Edit and Resend, a what-if, `agent-sessions run
 * --from-turn N`), version 2 of `forwardedProps.agentSessions` carries `tools`: the mode and the turn's recorded calls
 * (docs/agent-command.md §2). Wrap your agent's function tools (those `tool()` makes) once, and a call that matches a
 * recorded one gets the recorded output instead of running again:
 *
 *   const replay = new ToolReplay(input.forwardedProps.agentSessions, { report: emitEvent });
 *   const agent = myAgent.clone({ tools: replayTools(myAgent.tools, replay) });
 *
 * - `replay` (the default for a re-run): a call whose tool name and arguments match an unused recorded call returns its
 *   output and the tool's `execute` does not run; any other call runs live.
 * - `strict`: a call with no match throws `StrictReplayError` before its tool runs, which fails the run.
 * - `live`, version 1, or no `tools`: every call runs live (with version 1 or no `tools` the tools are returned as they
 *   are, and nothing is reported).
 *
 * Matching: same tool name and equal arguments as JSON values (key order, spacing and number spelling ignored; text
 * that is not JSON is compared as text); identical calls take the recorded ones in recorded order; tools named in
 * `nameOnly` match by name alone. Each call is reported through `report` with a CUSTOM event
 * `agent-sessions.tool-replay` `{ callId, name, outcome: "replayed" | "live" | "unmatched", recordedCallId }`.
 *
 * Checked against @openai/agents 0.20: a function tool is `{ type: 'function', name, invoke(runContext, input,
 * details) }` with the call in `details.toolCall` (its `callId`); a string result is written unchanged.
 */

export const REPORT_EVENT = 'agent-sessions.tool-replay';
const MODES = ['replay', 'strict', 'live'];
/** A strict failure quotes the call's arguments; past this they are cut (the message is one line in the view). */
const MAX_QUOTED_ARGUMENTS = 200;

/** A call in `strict` mode that matches no recorded call: thrown before its tool runs, so the run fails. */
export class StrictReplayError extends Error {
  constructor(message, call) {
    super(message);
    this.name = 'StrictReplayError';
    this.call = call;
  }
}

/** Object keys sorted at every depth; numbers as JavaScript spells them (so `1.0`, `1e0` and `1` are one value). */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** The key arguments are compared by: canonical JSON, or the text itself when it is not JSON. */
export function argumentsKey(text) {
  try {
    return `j${canonical(JSON.parse(text))}`;
  } catch {
    return `t${text}`;
  }
}

const UNREPRODUCIBLE = Symbol('unreproducible');
const isText = (v) => typeof v === 'string';
const only = (part, keys) => Object.entries(part).every(([k, v]) => (k === 'type' || keys.includes(k)) && isText(v));

/** A stored content part (Responses API shape) as the tool result `@openai/agents` writes back as that part. */
function toolResultPart(part) {
  if (part === null || typeof part !== 'object') return UNREPRODUCIBLE;
  const detail = part.detail ? { detail: part.detail } : {};
  const named = part.filename ? { filename: part.filename } : {};
  switch (part.type) {
    case 'input_text':
      return only(part, ['text']) && isText(part.text) ? { type: 'text', text: part.text } : UNREPRODUCIBLE;
    case 'input_image':
      if (!only(part, ['image_url', 'file_id', 'detail']) || (part.image_url && part.file_id)) return UNREPRODUCIBLE;
      if (part.image_url) return { type: 'image', image: part.image_url, ...detail };
      return part.file_id ? { type: 'image', image: { fileId: part.file_id }, ...detail } : UNREPRODUCIBLE;
    case 'input_file': {
      if (!only(part, ['file_data', 'file_url', 'file_id', 'filename'])) return UNREPRODUCIBLE;
      if ([part.file_data, part.file_url, part.file_id].filter(Boolean).length !== 1) return UNREPRODUCIBLE;
      if (part.file_url) return { type: 'file', file: { url: part.file_url, ...named } };
      if (part.file_id) return { type: 'file', file: { id: part.file_id, ...named } };
      if (!part.filename) return /^https?:\/\//.test(part.file_data.trim()) ? UNREPRODUCIBLE : { type: 'file', file: part.file_data };
      // With a filename the SDK takes the data as base64 and a media type, and writes them back as a data URL.
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(part.file_data);
      return m ? { type: 'file', file: { data: m[2], mediaType: m[1], filename: part.filename } } : UNREPRODUCIBLE;
    }
    default:
      return UNREPRODUCIBLE;
  }
}

/**
 * What the tool returns so that the SDK writes exactly `output` as the call's output: a string as it is (parsed, for a
 * tool with an `outputSchema`, which the SDK serialises), a list of content parts as the SDK's structured outputs.
 * `UNREPRODUCIBLE` for anything else: such a recorded call is not replayed.
 */
function toolResult(output, tool) {
  if (typeof output === 'string') {
    if (!tool.outputSchema) return output;
    try {
      const value = JSON.parse(output);
      return JSON.stringify(value) === output ? value : UNREPRODUCIBLE;
    } catch {
      return UNREPRODUCIBLE;
    }
  }
  if (tool.outputSchema || !Array.isArray(output) || output.length === 0) return UNREPRODUCIBLE;
  const parts = output.map(toolResultPart);
  return parts.includes(UNREPRODUCIBLE) ? UNREPRODUCIBLE : parts;
}

function bad(field, what) {
  return new TypeError(`forwardedProps.agentSessions.tools${field} ${what}`);
}

/** One run's replay: the recorded calls, which of them were used, and the report of each call. One per run. */
export class ToolReplay {
  /**
   * @param agentSessions `forwardedProps.agentSessions` of the RunAgentInput.
   * @param options.report receives each CUSTOM event (write it to stdout as one line).
   */
  constructor(agentSessions, { report }) {
    this.report = report;
    const tools = agentSessions?.tools;
    // Version 1 has no tools; an absent field means the same: every tool runs live, as before replay existed.
    this.enabled = Number.isInteger(agentSessions?.version) && agentSessions.version >= 2 && tools != null;
    this.mode = 'live';
    /** The strict refusal that ended the run, if one did (the SDK wraps it in its own error). */
    this.refused = null;
    this.nameOnly = new Set();
    this.recorded = [];
    this.used = [];
    if (!this.enabled) return;
    // Bad input fails the run here, before the session is touched, naming the field.
    if (typeof tools !== 'object' || Array.isArray(tools)) throw bad('', 'must be an object');
    if (!MODES.includes(tools.mode)) throw bad('.mode', `must be one of ${MODES.join(', ')}, not ${JSON.stringify(tools.mode)}`);
    this.mode = tools.mode;
    const nameOnly = tools.nameOnly ?? [];
    if (!Array.isArray(nameOnly) || !nameOnly.every(isText)) throw bad('.nameOnly', 'must be a list of tool names');
    this.nameOnly = new Set(nameOnly);
    const recorded = tools.recorded ?? [];
    if (!Array.isArray(recorded)) throw bad('.recorded', 'must be a list');
    recorded.forEach((call, i) => {
      for (const key of ['callId', 'name', 'arguments'])
        if (typeof call?.[key] !== 'string') throw bad(`.recorded[${i}].${key}`, 'must be a string');
      this.recorded.push({ ...call, key: argumentsKey(call.arguments) });
      this.used.push(false);
    });
  }

  /** The first unused recorded call that matches and can be written back exactly; recorded order decides. */
  find(name, key, tool) {
    for (const [i, c] of this.recorded.entries()) {
      if (this.used[i] || c.name !== name || c.hasOutput === false) continue;
      if (!this.nameOnly.has(name) && c.key !== key) continue;
      const result = toolResult(c.output, tool);
      if (result !== UNREPRODUCIBLE) return { at: i, result };
    }
    return null;
  }

  /** For messages: an unused recorded call of the same tool, else any of it, else the first recorded call. */
  nearest(name) {
    const same = this.recorded.filter((c) => c.name === name);
    return same.find((c) => !this.used[this.recorded.indexOf(c)]) ?? same[0] ?? this.recorded[0] ?? null;
  }

  /**
   * Decides one call of `tool` before it would run and reports it: `{ result }` to return the recorded output, or
   * null to run it live. Throws `StrictReplayError` in `strict` for a call with no match.
   */
  decide(callId, tool, args) {
    const name = tool.name;
    const hit = this.mode === 'live' ? null : this.find(name, argumentsKey(args), tool);
    if (hit) {
      this.used[hit.at] = true;
      this.emit(callId, name, 'replayed', this.recorded[hit.at].callId);
      return { result: hit.result };
    }
    const near = this.mode === 'live' ? null : this.nearest(name);
    if (this.mode === 'strict') {
      this.emit(callId, name, 'unmatched', near?.callId ?? null);
      this.refused = new StrictReplayError(strictMessage(name, args, near), { callId, name, arguments: args });
      throw this.refused;
    }
    this.emit(callId, name, 'live', near?.callId ?? null);
    return null;
  }

  emit(callId, name, outcome, recordedCallId) {
    this.report({ type: 'CUSTOM', name: REPORT_EVENT, value: { callId, name, outcome, recordedCallId } });
  }
}

const quoted = (text) => (text.length > MAX_QUOTED_ARGUMENTS ? `${text.slice(0, MAX_QUOTED_ARGUMENTS)}…` : text);

function strictMessage(name, args, near) {
  const message = `Strict replay: the call ${name}(${quoted(args)}) matches no recorded call, so it was not run and nothing was written.`;
  if (!near) return `${message} The recorded turn has no function calls.`;
  return `${message} Nearest recorded call: ${near.name}(${quoted(near.arguments)}), id ${near.callId}.`;
}

/**
 * Your tools, each function tool asking `replay` first. Without a replay table (version 1, or no `tools`) they come
 * back as they are. Hosted tools (web search, file search, …) run on the provider's side and stay live.
 */
export function replayTools(tools, replay) {
  if (!replay.enabled) return [...tools];
  return tools.map((tool) => {
    if (tool.type !== 'function') return tool;
    // Everything else is the tool's own, through its prototype; the user's tool object is left as it was.
    const wrapped = Object.create(tool);
    wrapped.invoke = async (runContext, input, details) => {
      const callId = details?.toolCall?.callId ?? details?.toolCall?.id ?? '';
      const decision = replay.decide(callId, tool, input);
      return decision ? decision.result : tool.invoke(runContext, input, details);
    };
    return wrapped;
  });
}
