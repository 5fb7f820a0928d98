/**
 * One item format in the file (docs/session-format.md §14.1): the Responses API's input items, exactly as the Python SDK
 * stores them. The JS SDK's runner speaks its own protocol items (`function_call_result`, `callId`, `hosted_tool_call`,
 * `providerData`…), which the Python SDK would hand to the API unchanged and the API rejects; and the JS runner rejects
 * Python's `function_call_output`. So the store converts on the way in (`toStoredItem`) and on the way out
 * (`fromStoredItems`), and a session file can be continued by either SDK.
 *
 * Rules that keep this lossless for what the runner needs:
 * - An item that is already Responses-shaped is stored unchanged, byte for byte (Python's items, conformance replays).
 * - A Responses item the JS protocol has no exact type for (developer messages, `item_reference`, custom tool calls,
 *   array tool outputs…) is read as `{type: 'unknown', providerData: <the stored item>}`, which the JS SDK sends to the
 *   API verbatim, and which is stored back verbatim.
 * - Fields the Responses shape has no place for are not stored. The one the runner needs, a tool output's `name`, is
 *   recovered on read from the call with the same `call_id` (or is the `call_id` itself, as the JS SDK does when it
 *   reads a Conversations session).
 * - Files written by earlier versions hold JS-shaped items; those are recognised and read unchanged.
 *
 * The field mapping follows the JS SDK's own Responses converter (`@openai/agents-openai`), which is not exported.
 */
import type { AgentInputItem } from '@openai/agents';

type Json = Record<string, unknown>;

/** The id the JS SDK gives items from models that assign none; the API refuses it, so it is never stored. */
const PLACEHOLDER_ID = '__fake_id__';

/** Item types only the JS protocol has. */
const JS_ONLY_TYPES = new Set(['function_call_result', 'computer_call_result', 'hosted_tool_call', 'unknown']);

/** Built-in tool calls the JS protocol folds into `hosted_tool_call` with the API item kept in `providerData`. */
const HOSTED_TOOL_TYPES = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
]);

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drops keys whose value is undefined, so converted items compare and encode like stored ones. */
function compact(obj: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

/** `providerData` minus the keys the item itself defines (the SDK keeps ids and types there too). */
function extras(providerData: unknown, reserved: readonly string[]): Json {
  if (!isRecord(providerData)) return {};
  const out: Json = {};
  for (const [k, v] of Object.entries(providerData)) if (!reserved.includes(k)) out[k] = v;
  return out;
}

/** Everything of `item` but `taken`, as `providerData` (only when something is left). */
function rest(item: Json, taken: readonly string[]): { providerData?: Json } {
  const left = extras(item, taken);
  return Object.keys(left).length > 0 ? { providerData: left } : {};
}

function realId(id: unknown): unknown {
  return id === PLACEHOLDER_ID ? undefined : id;
}

function isMessage(item: Json): boolean {
  return item.type === 'message' || (item.type === undefined && typeof item.role === 'string');
}

function isJsContentPart(part: unknown): boolean {
  if (!isRecord(part)) return false;
  if ('providerData' in part || 'promptCacheBreakpoint' in part) return true;
  switch (part.type) {
    case 'input_image':
      return 'image' in part || 'imageUrl' in part || 'fileId' in part;
    case 'input_file':
      return 'file' in part || 'fileData' in part || 'fileUrl' in part || 'fileId' in part;
    case 'output_text':
      return !('annotations' in part);
    default:
      return false;
  }
}

/** Whether an item is in the JS protocol's shape (written by the JS runner, or by an earlier version of this store). */
export function isJsShapedItem(item: unknown): boolean {
  if (!isRecord(item)) return false;
  if ('providerData' in item || 'callId' in item) return true;
  if (typeof item.type === 'string' && JS_ONLY_TYPES.has(item.type)) return true;
  if (item.type === 'reasoning') return !('summary' in item);
  if (isMessage(item) && Array.isArray(item.content)) return item.content.some(isJsContentPart);
  return false;
}

// -----------------------------------------------------------------------------------------------------------------
// JS → stored

function callerToStored(caller: unknown): unknown {
  if (!isRecord(caller)) return undefined;
  return caller.type === 'program' ? { type: 'program', caller_id: caller.callerId } : { type: 'direct' };
}

function callerFromStored(caller: unknown): unknown {
  if (!isRecord(caller)) return undefined;
  if (caller.type === 'direct') return { type: 'direct' };
  if (caller.type === 'program' && typeof caller.caller_id === 'string') return { type: 'program', callerId: caller.caller_id };
  return undefined;
}

function fileFieldsToStored(file: unknown): Json {
  if (typeof file === 'string') {
    const value = file.trim();
    return value.startsWith('https://') || value.startsWith('http://') ? { file_url: value } : { file_data: value };
  }
  if (isRecord(file)) {
    if (typeof file.id === 'string') return { file_id: file.id };
    if (typeof file.url === 'string') return { file_url: file.url };
  }
  return {};
}

function contentPartToStored(part: unknown): unknown {
  if (!isJsContentPart(part) || !isRecord(part)) return part;
  const pd = part.providerData;
  const breakpoint = part.promptCacheBreakpoint === undefined ? {} : { prompt_cache_breakpoint: part.promptCacheBreakpoint };
  switch (part.type) {
    case 'input_text':
      return compact({ type: 'input_text', text: part.text, ...breakpoint, ...extras(pd, ['type', 'text']) });
    case 'input_image': {
      const image = part.image ?? part.imageUrl;
      const source =
        typeof image === 'string'
          ? { image_url: image }
          : isRecord(image) && typeof image.id === 'string'
            ? { file_id: image.id }
            : typeof part.fileId === 'string'
              ? { file_id: part.fileId }
              : {};
      return compact({
        type: 'input_image',
        detail: part.detail,
        ...source,
        ...breakpoint,
        ...extras(pd, ['type', 'detail', 'image_url', 'file_id']),
      });
    }
    case 'input_file': {
      const source = {
        ...fileFieldsToStored(part.file),
        ...(typeof part.fileData === 'string' ? { file_data: part.fileData } : {}),
        ...(typeof part.fileUrl === 'string' ? { file_url: part.fileUrl } : {}),
        ...(typeof part.fileId === 'string' ? { file_id: part.fileId } : {}),
      };
      return compact({
        type: 'input_file',
        ...source,
        filename: part.filename,
        ...breakpoint,
        ...extras(pd, ['type', 'file_data', 'file_url', 'file_id', 'filename']),
      });
    }
    case 'output_text': {
      const annotations = isRecord(pd) && Array.isArray(pd.annotations) ? pd.annotations : [];
      return compact({ type: 'output_text', text: part.text, annotations, ...extras(pd, ['type', 'text', 'annotations']) });
    }
    case 'refusal':
      return compact({ type: 'refusal', refusal: part.refusal, ...extras(pd, ['type', 'refusal']) });
    default: {
      const { providerData, ...plain } = part;
      return compact({ ...plain, ...extras(providerData, Object.keys(plain)) });
    }
  }
}

function messageToStored(item: Json): Json {
  const content = Array.isArray(item.content) ? item.content.map(contentPartToStored) : item.content;
  const assistant = item.role === 'assistant';
  return compact({
    id: assistant ? realId(item.id) : item.id,
    type: assistant ? 'message' : item.type,
    role: item.role,
    content,
    status: item.status,
    phase: item.phase,
    ...extras(item.providerData, ['id', 'type', 'role', 'content', 'status', 'phase']),
  });
}

/** A function tool's output as the Responses API takes it (the JS runner wraps text as `{type: 'text'}`). */
function toolOutputToStored(output: unknown): unknown {
  if (typeof output === 'string') return output;
  if (Array.isArray(output))
    return output.map((entry) =>
      isRecord(entry) && entry.type === 'text' ? { type: 'input_text', text: entry.text } : contentPartToStored(entry),
    );
  if (isRecord(output)) {
    if (output.type === 'text' && typeof output.text === 'string') return output.text;
    if (output.type === 'image' && typeof output.image === 'string')
      return [compact({ type: 'input_image', image_url: output.image, detail: output.detail })];
    if (output.type === 'file')
      return [
        compact({
          type: 'input_file',
          ...fileFieldsToStored(output.file),
          filename: isRecord(output.file) ? output.file.filename : undefined,
        }),
      ];
  }
  return output;
}

/** Shell output entries, the exit code's key renamed (`exitCode` in the JS protocol, `exit_code` in the file). */
function shellEntries(output: unknown, from: string, to: string): Json[] {
  return (Array.isArray(output) ? output : []).map((o: unknown) => {
    const entry = isRecord(o) ? o : {};
    const outcome = isRecord(entry.outcome) ? entry.outcome : {};
    return {
      stdout: entry.stdout,
      stderr: entry.stderr,
      outcome: outcome.type === 'timeout' ? { type: 'timeout' } : { type: 'exit', [to]: outcome[from] ?? null },
    };
  });
}

type ToStored = (item: Json) => Json;

/**
 * A JS item whose fields map one to one onto the stored item's: a key kept as it is, or `[stored key, JS key, …]`
 * taking the first JS key that is set. Provider data fills in what the item does not define.
 */
function renamed(type: string, fields: readonly (string | readonly string[])[]): ToStored {
  const pairs = fields.map((f) => (typeof f === 'string' ? [f, f] : f));
  const reserved = ['type', ...pairs.flat()];
  return (i) =>
    compact({
      type,
      ...Object.fromEntries(pairs.map(([to, ...from]) => [to, from.map((k) => i[k]).find((v) => v !== undefined)])),
      ...extras(i.providerData, reserved),
    });
}

/** JS item type → its Responses shape; the key order follows the API's own objects where it matters to no one else. */
const TO_STORED: Record<string, ToStored> = {
  function_call: (i) =>
    compact({
      type: 'function_call',
      id: realId(i.id),
      call_id: i.callId,
      name: i.name,
      namespace: i.namespace,
      arguments: i.arguments,
      status: i.status,
      caller: callerToStored(i.caller),
      ...extras(i.providerData, ['id', 'type', 'name', 'call_id', 'arguments', 'status', 'namespace', 'caller']),
    }),
  function_call_result: (i) =>
    compact({
      type: 'function_call_output',
      id: i.id,
      call_id: i.callId,
      output: toolOutputToStored(i.output),
      status: i.status,
      caller: callerToStored(i.caller),
      ...extras(i.providerData, ['type', 'id', 'call_id', 'output', 'status', 'namespace', 'caller', 'name']),
    }),
  reasoning: (i) => {
    const pd = isRecord(i.providerData) ? i.providerData : {};
    const summary = (Array.isArray(i.content) ? i.content : []).map((c: unknown) =>
      isRecord(c) ? compact({ type: 'summary_text', text: c.text, ...extras(c.providerData, ['type', 'text']) }) : c,
    );
    const raw = Array.isArray(i.rawContent)
      ? i.rawContent.map((c: unknown) => (isRecord(c) ? { type: 'reasoning_text', text: c.text } : c))
      : undefined;
    return compact({
      type: 'reasoning',
      id: i.id,
      summary,
      content: raw,
      encrypted_content: pd.encrypted_content ?? pd.encryptedContent,
      ...extras(pd, ['id', 'type', 'summary', 'content', 'encrypted_content', 'encryptedContent']),
    });
  },
  computer_call: (i) =>
    compact({
      type: 'computer_call',
      id: i.id,
      call_id: i.callId,
      status: i.status,
      action: i.action,
      actions: i.actions,
      ...extras(i.providerData, ['type', 'call_id', 'id', 'action', 'actions', 'status']),
    }),
  computer_call_result: (i) => {
    const output = isRecord(i.output) ? compact({ type: 'computer_screenshot', image_url: i.output.data }) : i.output;
    return compact({
      type: 'computer_call_output',
      id: i.id,
      call_id: i.callId,
      output,
      ...extras(i.providerData, ['type', 'id', 'call_id', 'output']),
    });
  },
  shell_call: (i) => {
    const action = isRecord(i.action) ? i.action : {};
    return compact({
      type: 'shell_call',
      id: i.id,
      call_id: i.callId,
      status: i.status ?? 'in_progress',
      action: { commands: action.commands, timeout_ms: action.timeoutMs ?? null, max_output_length: action.maxOutputLength ?? null },
      caller: callerToStored(i.caller),
      ...extras(i.providerData, ['type', 'id', 'call_id', 'status', 'action', 'caller']),
    });
  },
  shell_call_output: (i) =>
    compact({
      type: 'shell_call_output',
      id: i.id,
      call_id: i.callId,
      status: i.status,
      output: shellEntries(i.output, 'exitCode', 'exit_code'),
      max_output_length: i.maxOutputLength,
      caller: callerToStored(i.caller),
      ...extras(i.providerData, ['type', 'id', 'call_id', 'status', 'output', 'max_output_length', 'caller']),
    }),
  apply_patch_call: (i) => {
    const op = isRecord(i.operation) ? i.operation : {};
    const { moveTo, ...opRest } = op;
    return compact({
      type: 'apply_patch_call',
      id: i.id,
      call_id: i.callId,
      status: i.status ?? 'in_progress',
      operation: compact({ ...opRest, move_to: moveTo }),
      caller: callerToStored(i.caller),
      ...extras(i.providerData, ['type', 'id', 'call_id', 'status', 'operation', 'caller']),
    });
  },
  apply_patch_call_output: (i) =>
    compact({
      type: 'apply_patch_call_output',
      id: i.id,
      call_id: i.callId,
      status: i.status ?? 'completed',
      output: i.output,
      caller: callerToStored(i.caller),
      ...extras(i.providerData, ['type', 'id', 'call_id', 'status', 'output', 'caller']),
    }),
  hosted_tool_call: (i) => {
    const pd = isRecord(i.providerData) ? i.providerData : {};
    const type = typeof pd.type === 'string' ? pd.type : (HOSTED_NAME_TYPES[String(i.name)] ?? i.name);
    const isImage = type === 'image_generation_call';
    const isMcpOutput = type === 'mcp_call';
    return compact({
      ...pd,
      type,
      id: pd.id ?? i.id,
      status: HOSTED_WITH_STATUS.has(String(type)) ? (i.status ?? pd.status) : pd.status,
      ...(isImage && i.output !== undefined ? { result: i.output } : {}),
      ...(isMcpOutput && i.output !== undefined ? { output: i.output } : {}),
      caller: callerToStored(i.caller) ?? pd.caller,
    });
  },
  compaction: (i) => compact({ type: 'compaction', id: i.id, encrypted_content: i.encrypted_content ?? i.encryptedContent }),
  unknown: (i) => compact({ ...(isRecord(i.providerData) ? i.providerData : {}), id: i.id }),
  tool_search_call: renamed('tool_search_call', ['id', 'status', 'arguments', ['call_id', 'callId', 'call_id'], 'execution']),
  tool_search_output: renamed('tool_search_output', ['id', 'status', 'tools', ['call_id', 'callId', 'call_id'], 'execution']),
  program: renamed('program', ['id', ['call_id', 'callId'], 'code', 'fingerprint']),
  program_output: renamed('program_output', ['id', ['call_id', 'callId'], ['result', 'output'], 'status']),
};

/** Hosted calls whose API item carries a `status` of the call itself. */
const HOSTED_WITH_STATUS = new Set(['web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call']);

/**
 * The item as it goes into `message_data`: the Responses API input item the Python SDK would store. Items already in
 * that shape (or in no shape we know) come back as they are.
 */
export function toStoredItem(item: AgentInputItem): Json {
  const record = item as unknown;
  if (!isRecord(record) || !isJsShapedItem(record)) return record as Json;
  if (isMessage(record)) return messageToStored(record);
  const convert = typeof record.type === 'string' ? TO_STORED[record.type] : undefined;
  return convert ? convert(record) : record;
}

// -----------------------------------------------------------------------------------------------------------------
// stored → JS

/** Marks a stored item the JS protocol cannot represent exactly: the SDK sends `providerData` to the API verbatim. */
function opaque(item: Json): AgentInputItem {
  return compact({
    type: 'unknown',
    id: typeof item.id === 'string' ? item.id : undefined,
    providerData: item,
  }) as unknown as AgentInputItem;
}

/** A content part read back: its JS fields, the cache breakpoint renamed, anything else kept as `providerData`. */
function partFromStored(fields: Json, breakpoint: unknown, more: Json): Json {
  return compact({ ...fields, promptCacheBreakpoint: breakpoint, ...(Object.keys(more).length > 0 ? { providerData: more } : {}) });
}

/** The first of a stored part's alternative source fields that is set, in the JS form. */
function sourceFromStored(candidates: readonly [unknown, (value: string) => unknown][]): unknown {
  const found = candidates.find(([value]) => typeof value === 'string');
  return found ? found[1](found[0] as string) : undefined;
}

const CONTENT_FROM_STORED: Record<string, (part: Json) => Json | undefined> = {
  input_text: (p) => {
    const { type, text, prompt_cache_breakpoint, ...more } = p;
    return typeof text === 'string' ? partFromStored({ type, text }, prompt_cache_breakpoint, more) : undefined;
  },
  input_image: (p) => {
    const { type, detail, image_url, file_id, prompt_cache_breakpoint, ...more } = p;
    const image = sourceFromStored([
      [image_url, (url) => url],
      [file_id, (id) => ({ id })],
    ]);
    return image === undefined ? undefined : partFromStored({ type, image, detail }, prompt_cache_breakpoint, more);
  },
  input_file: (p) => {
    const { type, file_data, file_url, file_id, filename, prompt_cache_breakpoint, ...more } = p;
    const file = sourceFromStored([
      [file_data, (data) => data],
      [file_url, (url) => ({ url })],
      [file_id, (id) => ({ id })],
    ]);
    return file === undefined ? undefined : partFromStored({ type, file, filename }, prompt_cache_breakpoint, more);
  },
  output_text: (p) => {
    const { type, text, annotations, ...more } = p;
    if (typeof text !== 'string') return undefined;
    // No annotations is what a JS item without them stores (`annotations: []`), so it reads back without them.
    const kept = Array.isArray(annotations) && annotations.length === 0 ? more : { annotations, ...more };
    return { type, text, ...(Object.keys(compact(kept)).length > 0 ? { providerData: compact(kept) } : {}) };
  },
  refusal: (p) => {
    const { type, refusal, ...more } = p;
    if (typeof refusal !== 'string') return undefined;
    return { type, refusal, ...(Object.keys(more).length > 0 ? { providerData: more } : {}) };
  },
};

function contentFromStored(content: unknown[], allowed: readonly string[]): Json[] | undefined {
  const out: Json[] = [];
  for (const part of content) {
    if (!isRecord(part) || typeof part.type !== 'string' || !allowed.includes(part.type)) return undefined;
    const converted = CONTENT_FROM_STORED[part.type]?.(part);
    if (!converted) return undefined;
    out.push(converted);
  }
  return out;
}

function messageFromStored(item: Json): AgentInputItem {
  const { id, type, role, content, status, phase, ...more } = item;
  const providerData = Object.keys(more).length > 0 ? { providerData: more } : {};
  if (role === 'user') {
    if (typeof content === 'string') return item as unknown as AgentInputItem;
    const parts = Array.isArray(content) ? contentFromStored(content, ['input_text', 'input_image', 'input_file']) : undefined;
    if (!parts || status !== undefined || phase !== undefined) return opaque(item);
    return compact({ id, type, role, content: parts, ...providerData }) as unknown as AgentInputItem;
  }
  if (role === 'system') {
    if (typeof content !== 'string' || status !== undefined || phase !== undefined) return opaque(item);
    return item as unknown as AgentInputItem;
  }
  if (role === 'assistant') {
    const parts = Array.isArray(content) ? contentFromStored(content, ['output_text', 'refusal']) : undefined;
    const knownStatus = status === 'in_progress' || status === 'completed' || status === 'incomplete';
    if (!parts || !knownStatus || (phase !== undefined && phase !== 'commentary' && phase !== 'final_answer')) return opaque(item);
    return compact({ id, type: 'message', role, content: parts, status, phase, ...providerData }) as unknown as AgentInputItem;
  }
  // `developer` and anything else: the JS protocol has no such role.
  return opaque(item);
}

type FromStored = (item: Json, names: ReadonlyMap<string, string>) => Json | undefined;

const str = (v: unknown): v is string => typeof v === 'string';

/** Responses item type → JS protocol item; undefined means "not exactly representable" (read as `unknown`). */
const FROM_STORED: Record<string, FromStored> = {
  function_call: (i) => {
    const { type, id, call_id, name, namespace, arguments: args, status, caller, ...more } = i;
    if (!str(call_id) || !str(name) || !str(args)) return undefined;
    return compact({
      type,
      id,
      callId: call_id,
      name,
      namespace,
      status,
      arguments: args,
      caller: callerFromStored(caller),
      ...rest(more, []),
    });
  },
  function_call_output: (i, names) => {
    const { type: _type, id, call_id, output, status, caller, namespace, ...more } = i;
    if (!str(call_id) || !str(output)) return undefined;
    return compact({
      type: 'function_call_result',
      id,
      callId: call_id,
      name: names.get(call_id) ?? call_id,
      namespace,
      status: status ?? 'completed',
      output,
      caller: callerFromStored(caller),
      ...rest(more, []),
    });
  },
  reasoning: (i) => {
    const { type, id, summary, content, ...more } = i;
    if (!Array.isArray(summary) || !summary.every((s) => isRecord(s) && s.type === 'summary_text' && str(s.text))) return undefined;
    if (
      content !== undefined &&
      !(Array.isArray(content) && content.every((c) => isRecord(c) && c.type === 'reasoning_text' && str(c.text)))
    )
      return undefined;
    return compact({
      type,
      id,
      content: (summary as Json[]).map(({ type: _t, text, ...partMore }) => ({ type: 'input_text', text, ...rest(partMore, []) })),
      rawContent: (content as Json[] | undefined)?.map(({ text }) => ({ type: 'reasoning_text', text })),
      ...rest(more, []),
    });
  },
  computer_call: (i) => {
    const { type, id, call_id, status, action, actions, ...more } = i;
    if (!str(call_id) || !str(status) || (action === undefined && actions === undefined)) return undefined;
    return compact({
      type,
      id,
      callId: call_id,
      status,
      action: action ?? (Array.isArray(actions) ? actions[0] : undefined),
      actions,
      ...rest(more, []),
    });
  },
  computer_call_output: (i) => {
    const { type: _type, id, call_id, output, ...more } = i;
    if (
      !str(call_id) ||
      !isRecord(output) ||
      output.type !== 'computer_screenshot' ||
      !str(output.image_url) ||
      Object.keys(output).length !== 2
    )
      return undefined;
    return compact({
      type: 'computer_call_result',
      id,
      callId: call_id,
      output: { type: 'computer_screenshot', data: output.image_url },
      ...rest(more, []),
    });
  },
  shell_call: (i) => {
    const { type, id, call_id, status, action, caller, ...more } = i;
    if (!str(call_id) || !isRecord(action) || !Array.isArray(action.commands)) return undefined;
    const shellAction = compact({
      commands: action.commands,
      timeoutMs: action.timeout_ms ?? undefined,
      maxOutputLength: action.max_output_length ?? undefined,
    });
    return compact({ type, id, callId: call_id, status, action: shellAction, caller: callerFromStored(caller), ...rest(more, []) });
  },
  shell_call_output: (i) => {
    const { type, id, call_id, status, output, max_output_length, caller, ...more } = i;
    if (!str(call_id) || !Array.isArray(output)) return undefined;
    const entries = shellEntries(output, 'exit_code', 'exitCode');
    return compact({
      type,
      id,
      callId: call_id,
      status,
      output: entries,
      maxOutputLength: max_output_length,
      caller: callerFromStored(caller),
      ...rest(more, []),
    });
  },
  apply_patch_call: (i) => {
    const { type, id, call_id, status, operation, caller, ...more } = i;
    if (!str(call_id) || !isRecord(operation)) return undefined;
    const { move_to, ...op } = operation;
    return compact({
      type,
      id,
      callId: call_id,
      status,
      operation: compact({ ...op, moveTo: move_to }),
      caller: callerFromStored(caller),
      ...rest(more, []),
    });
  },
  apply_patch_call_output: (i) => {
    const { type, id, call_id, status, output, caller, ...more } = i;
    if (!str(call_id)) return undefined;
    return compact({ type, id, callId: call_id, status, output, caller: callerFromStored(caller), ...rest(more, []) });
  },
};

for (const hosted of HOSTED_TOOL_TYPES) {
  FROM_STORED[hosted] = (i) => {
    const { caller, ...providerData } = i;
    const output = hosted === 'image_generation_call' ? i.result : hosted === 'mcp_call' ? i.output : undefined;
    return compact({
      type: 'hosted_tool_call',
      id: i.id,
      name: hosted,
      status: HOSTED_WITH_STATUS.has(hosted) ? i.status : 'completed',
      output: output ?? undefined,
      caller: callerFromStored(caller),
      providerData: caller === undefined || callerFromStored(caller) === undefined ? i : providerData,
    });
  };
}

/** The API item type a hosted call's `name` means (older JS writers named some without the `_call` suffix). */
const HOSTED_NAME_TYPES: Record<string, string> = {
  web_search: 'web_search_call',
  file_search: 'file_search_call',
  code_interpreter: 'code_interpreter_call',
  image_generation: 'image_generation_call',
};

/**
 * A JS-shaped `hosted_tool_call` from an old JS writer has no `providerData.type`, and the runner decides the built-in
 * call's kind by it alone ("Unsupported built-in tool call type"): read it as the call its `name` names.
 */
function legacyHostedCall(item: Json): Json {
  if (item.type !== 'hosted_tool_call' || typeof item.name !== 'string') return item;
  const pd = isRecord(item.providerData) ? item.providerData : undefined;
  if (pd && typeof pd.type === 'string') return item;
  const type = HOSTED_TOOL_TYPES.has(item.name) ? item.name : HOSTED_NAME_TYPES[item.name];
  return type ? { ...item, providerData: { ...pd, type } } : item;
}

function fromStored(item: unknown, names: ReadonlyMap<string, string>): AgentInputItem {
  if (!isRecord(item)) return item as AgentInputItem;
  if (isJsShapedItem(item)) return legacyHostedCall(item) as unknown as AgentInputItem;
  if (isMessage(item)) return messageFromStored(item);
  if (item.type === 'compaction') return item as unknown as AgentInputItem;
  const convert = typeof item.type === 'string' ? FROM_STORED[item.type] : undefined;
  const converted = convert?.(item, names);
  return converted ? (converted as unknown as AgentInputItem) : opaque(item);
}

/**
 * The general conversion, one item at a time after a first pass has collected every call's name: the reference the
 * fast path (`fastFromStored`) must agree with, and what runs for every item the fast path leaves alone.
 */
export function fromStoredItemsGeneral(items: readonly unknown[]): AgentInputItem[] {
  const names = new Map<string, string>();
  for (const item of items) {
    if (!isRecord(item) || item.type !== 'function_call' || !str(item.name)) continue;
    const callId = item.call_id ?? item.callId;
    if (str(callId)) names.set(callId, item.name);
  }
  return items.map((item) => fromStored(item, names));
}

// -----------------------------------------------------------------------------------------------------------------
// stored → JS, fast path
//
// `getItems()` reads the whole history before every turn, so the items every run writes (messages, function calls and
// their outputs, reasoning) are converted here with one look at their keys (`Object.keys`, a switch), building only
// the objects the result keeps. The code is kept cheap in V8's baseline tier as well: a full collection discards the
// optimised code of anything that read objects whose shapes died with them (as the parsed rows of the last read did).
//
// Each function returns undefined for anything it does not handle exactly (a JS-only key, a caller, a part of another
// kind, a prototype other than Object's…), and the general conversion runs instead. So the result is always what the
// general conversion returns, key order included (test/unit/store/format/itemShapeFastPath.test.ts).

/**
 * A plain object as `JSON.parse` makes them. With Object's prototype, `Object.keys` lists every key a read can see
 * (the general path also sees inherited ones, through `in` and destructuring).
 */
function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** 1 for a value that is there: counts the optional keys an item has, to compare with its number of keys. */
const defined = (value: unknown): number => (value === undefined ? 0 : 1);

/**
 * The keys of `item` that `known` does not list, copied in order as the general path's rest destructuring and
 * `extras()` copy them (undefined values included): null when there is none; undefined when one is `refused` (a
 * JS-only key, or one the general path converts) or is "__proto__" (which assignment would make the prototype).
 * Only runs when the item has more keys than the ones the fast path reads.
 */
function extraKeys(item: Json, known: (key: string) => boolean, refused: (key: string) => boolean): Json | null | undefined {
  let out: Json | null = null;
  for (const k of Object.keys(item)) {
    if (known(k)) continue;
    if (refused(k) || k === '__proto__') return undefined;
    (out ??= {})[k] = item[k];
  }
  return out;
}

const NONE = (): boolean => false;
const MESSAGE_KEY = (k: string): boolean =>
  k === 'id' || k === 'type' || k === 'role' || k === 'content' || k === 'status' || k === 'phase';
const OUTPUT_TEXT_KEY = (k: string): boolean => k === 'type' || k === 'text' || k === 'annotations';
const REFUSAL_KEY = (k: string): boolean => k === 'type' || k === 'refusal';
/** Part keys that make a part, and so its message, JS-shaped: the general path returns such a message unchanged. */
const JS_PART_KEY = (k: string): boolean => k === 'providerData' || k === 'promptCacheBreakpoint';
const FUNCTION_CALL_KEY = (k: string): boolean =>
  k === 'type' || k === 'id' || k === 'call_id' || k === 'name' || k === 'namespace' || k === 'arguments' || k === 'status';
const FUNCTION_OUTPUT_KEY = (k: string): boolean =>
  k === 'type' || k === 'id' || k === 'call_id' || k === 'output' || k === 'status' || k === 'namespace';
const REASONING_KEY = (k: string): boolean => k === 'type' || k === 'id' || k === 'summary' || k === 'content';
/** Item keys that make an item JS-shaped (the general path returns it unchanged). */
const JS_ITEM_KEY = (k: string): boolean => k === 'providerData' || k === 'callId';
/** The same, plus the `caller` the general path converts on function calls and outputs. */
const JS_ITEM_OR_CALLER_KEY = (k: string): boolean => k === 'providerData' || k === 'callId' || k === 'caller';

/** An assistant message's `output_text` or `refusal` part, or undefined. */
function fastAssistantPart(part: unknown): Json | undefined {
  if (!isPlainObject(part)) return undefined;
  const type = part.type;
  if (type === 'output_text') {
    const { text, annotations } = part;
    // Without `annotations` the part is JS-shaped; an undefined one is dropped by the general path's compact().
    if (typeof text !== 'string' || annotations === undefined) return undefined;
    const kept = Array.isArray(annotations) && annotations.length === 0;
    if (Object.keys(part).length === 3) return kept ? { type, text } : { type, text, providerData: { annotations } };
    const more = extraKeys(part, OUTPUT_TEXT_KEY, JS_PART_KEY);
    if (!more) return undefined;
    for (const k in more) if (more[k] === undefined) return undefined;
    return { type, text, providerData: kept ? more : { annotations, ...more } };
  }
  if (type === 'refusal') {
    const refusal = part.refusal;
    if (typeof refusal !== 'string') return undefined;
    if (Object.keys(part).length === 2) return { type, refusal };
    const more = extraKeys(part, REFUSAL_KEY, JS_PART_KEY);
    return more ? { type, refusal, providerData: more } : undefined;
  }
  return undefined;
}

function fastMessage(item: Json): AgentInputItem | undefined {
  const { role, content, status, phase } = item;
  // A string content: the general path returns these unchanged, JS-shaped or not (a system one only without
  // status and phase, which would make it opaque).
  if (typeof content === 'string') {
    if (role === 'user' || (role === 'system' && status === undefined && phase === undefined)) return item as unknown as AgentInputItem;
    return undefined;
  }
  if (!Array.isArray(content)) return undefined;
  const { id, type } = item;
  // Keys beyond these would be `providerData`, and JS-only ones make the item JS-shaped: general path.
  if (
    Object.keys(item).length !== 2 + defined(id) + defined(type) + defined(status) + defined(phase) &&
    extraKeys(item, MESSAGE_KEY, NONE) !== null
  )
    return undefined;
  if (role === 'assistant') {
    if (status !== 'completed' && status !== 'in_progress' && status !== 'incomplete') return undefined;
    if (phase !== undefined && phase !== 'commentary' && phase !== 'final_answer') return undefined;
    const parts: Json[] = [];
    for (let i = 0; i < content.length; i++) {
      const part = fastAssistantPart(content[i]);
      if (part === undefined) return undefined;
      parts.push(part);
    }
    const out: Json =
      id === undefined ? { type: 'message', role, content: parts, status } : { id, type: 'message', role, content: parts, status };
    if (phase !== undefined) out.phase = phase;
    return out as unknown as AgentInputItem;
  }
  if (role === 'user') {
    if (status !== undefined || phase !== undefined) return undefined;
    const parts: Json[] = [];
    for (let i = 0; i < content.length; i++) {
      const part = content[i] as unknown;
      if (!isPlainObject(part) || part.type !== 'input_text' || typeof part.text !== 'string' || Object.keys(part).length !== 2)
        return undefined;
      parts.push({ type: 'input_text', text: part.text });
    }
    const out: Json = id === undefined ? {} : { id };
    if (type !== undefined) out.type = type;
    out.role = role;
    out.content = parts;
    return out as unknown as AgentInputItem;
  }
  return undefined;
}

function fastFunctionCall(item: Json): AgentInputItem | undefined {
  const { type, id, call_id, name, namespace, arguments: args, status } = item;
  if (typeof call_id !== 'string' || typeof name !== 'string' || typeof args !== 'string') return undefined;
  let providerData: Json | null | undefined = null;
  if (Object.keys(item).length !== 4 + defined(id) + defined(namespace) + defined(status)) {
    providerData = extraKeys(item, FUNCTION_CALL_KEY, JS_ITEM_OR_CALLER_KEY);
    if (providerData === undefined) return undefined;
  }
  const out: Json = id === undefined ? { type, callId: call_id, name } : { type, id, callId: call_id, name };
  if (namespace !== undefined) out.namespace = namespace;
  if (status !== undefined) out.status = status;
  out.arguments = args;
  if (providerData) out.providerData = providerData;
  return out as unknown as AgentInputItem;
}

/** The output named by its own call id: `fromStoredItems` names it once every call has been seen. */
function fastFunctionOutput(item: Json): AgentInputItem | undefined {
  const { id, call_id, output, status, namespace } = item;
  if (typeof call_id !== 'string' || typeof output !== 'string') return undefined;
  let providerData: Json | null | undefined = null;
  if (Object.keys(item).length !== 3 + defined(id) + defined(status) + defined(namespace)) {
    providerData = extraKeys(item, FUNCTION_OUTPUT_KEY, JS_ITEM_OR_CALLER_KEY);
    if (providerData === undefined) return undefined;
  }
  const out: Json =
    id === undefined
      ? { type: 'function_call_result', callId: call_id, name: call_id }
      : { type: 'function_call_result', id, callId: call_id, name: call_id };
  if (namespace !== undefined) out.namespace = namespace;
  out.status = status ?? 'completed';
  out.output = output;
  if (providerData) out.providerData = providerData;
  return out as unknown as AgentInputItem;
}

function fastReasoning(item: Json): AgentInputItem | undefined {
  const { id, summary, content } = item;
  // Without `summary` the item is JS-shaped; raw reasoning content is left to the general path.
  if (!Array.isArray(summary) || content !== undefined) return undefined;
  const parts: Json[] = [];
  for (let i = 0; i < summary.length; i++) {
    const s = summary[i] as unknown;
    if (!isPlainObject(s) || s.type !== 'summary_text' || typeof s.text !== 'string' || Object.keys(s).length !== 2) return undefined;
    parts.push({ type: 'input_text', text: s.text });
  }
  let providerData: Json | null | undefined = null;
  if (Object.keys(item).length !== 2 + defined(id)) {
    providerData = extraKeys(item, REASONING_KEY, JS_ITEM_KEY);
    if (providerData === undefined) return undefined;
  }
  const out: Json = id === undefined ? { type: 'reasoning', content: parts } : { type: 'reasoning', id, content: parts };
  if (providerData) out.providerData = providerData;
  return out as unknown as AgentInputItem;
}

/** The common items converted directly; undefined for anything else (the general conversion then runs). */
export function fastFromStored(item: unknown): AgentInputItem | undefined {
  if (!isPlainObject(item)) return undefined;
  switch (item.type) {
    case 'function_call':
      return fastFunctionCall(item);
    case 'function_call_output':
      return fastFunctionOutput(item);
    case 'reasoning':
      return fastReasoning(item);
    case 'message':
      return fastMessage(item);
    case undefined:
      return typeof item.role === 'string' ? fastMessage(item) : undefined;
    default:
      return undefined;
  }
}

/**
 * Stored items (Responses shape, or the JS shape of older files) → the items the JS runner takes. A tool output's
 * `name`, which the Responses shape lacks, comes from the call with the same `call_id` among `items` (the last such
 * call, wherever it is).
 *
 * One pass: each item is converted as it comes (`fastFromStored`, else the general conversion) while the calls'
 * names are collected; the converted outputs are named at the end.
 */
export function fromStoredItems(items: readonly unknown[]): AgentInputItem[] {
  const out = new Array<AgentInputItem>(items.length);
  const names = new Map<string, string>();
  /** Converted tool outputs, named once every call has been seen. */
  const outputs: Json[] = [];
  for (let i = 0; i < items.length; i++) {
    if (!(i in items)) continue; // a hole stays a hole, as with `map`
    const item = items[i];
    const converted = fastFromStored(item) ?? fromStored(item, EMPTY_NAMES);
    out[i] = converted;
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') {
      const callId = item.call_id ?? item.callId;
      if (str(callId) && str(item.name)) names.set(callId, item.name);
    } else if (item.type === 'function_call_output' && (converted as { type?: unknown }).type === 'function_call_result') {
      // Read as a function_call_result, so converted (not returned as stored): ours to name.
      outputs.push(converted as unknown as Json);
    }
  }
  for (const output of outputs) {
    const callId = output.callId as string;
    output.name = names.get(callId) ?? callId;
  }
  return out;
}

const EMPTY_NAMES: ReadonlyMap<string, string> = new Map();

/**
 * The form the runner's persistence checks compare: what each item reads back as once stored, on its own. Two items
 * that store the same are equal in it, whatever JS-only metadata (placeholder ids, ids kept in `providerData`, a tool
 * output's name) they carried.
 */
export function normalizeForComparison(items: readonly AgentInputItem[]): AgentInputItem[] {
  // Item by item: the runner compares prepare([...a, ...b]) with [...prepare(a), ...prepare(b)], so an item's form must
  // not depend on its neighbours (a tool output's paired name would).
  return items.map((item) => fromStoredItems([toStoredItem(item)])[0] as AgentInputItem);
}
