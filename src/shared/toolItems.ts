/**
 * Tool items for people: which call an output answers (by `call_id`, as the Python SDK and the Responses API write
 * it, or `callId`, as the JS SDK does), and the key fields of each built-in tool's items (computer, file search, web
 * search, code interpreter, MCP, shell, image generation, apply_patch, custom tools) as labelled text and images.
 * Items are untrusted data: everything returned is text (labels are localized here with @vscode/l10n, which reads the
 * same bundle in the host and in the view),
 * and images are only `data:image/…;base64,` URLs, so nothing is ever fetched.
 */
import * as l10n from '@vscode/l10n';
import { isRecord, messageText, outputText, prettyJson } from './itemText';

/** Items that call a tool and expect an output item with the same call id. */
const CALL_TYPES = new Set([
  'function_call',
  'custom_tool_call',
  'computer_call',
  'shell_call',
  'local_shell_call',
  'apply_patch_call',
  'mcp_approval_request',
]);

/** Items that answer a call (by its call id). */
const OUTPUT_TYPES = new Set([
  'function_call_output',
  'function_call_result',
  'custom_tool_call_output',
  'computer_call_output',
  'computer_call_result',
  'shell_call_output',
  'local_shell_call_output',
  'apply_patch_call_output',
  'mcp_approval_response',
]);

/** Whether an item calls a tool, answers a call, or is neither. */
export function toolRole(item: unknown): 'call' | 'output' | undefined {
  if (!isRecord(item) || typeof item.type !== 'string') return undefined;
  if (CALL_TYPES.has(item.type)) return 'call';
  if (OUTPUT_TYPES.has(item.type)) return 'output';
  return undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The id that ties a call to its output: `call_id` (Python, Responses API) or `callId` (JS SDK). An MCP approval
 * request is answered by its `id` (`approval_request_id` on the response); a local shell output carries the call's id
 * as `call_id` or, in older files, `id`.
 */
export function callIdOf(item: unknown): string | undefined {
  if (!isRecord(item)) return undefined;
  if (item.type === 'mcp_approval_request') return str(item.id);
  if (item.type === 'mcp_approval_response') return str(item.approval_request_id) ?? str(item.approvalRequestId);
  return str(item.call_id) ?? str(item.callId) ?? (item.type === 'local_shell_call_output' ? str(item.id) : undefined);
}

/** One entry of a turn's detail: an item on its own, or a call with the output that answers it. */
export type DetailEntry<T> = { kind: 'item'; item: T } | { kind: 'pair'; call: T; output: T };

/**
 * Pairs each output with the call before it that has the same call id, at the call's place; an output with no such
 * call (or a second output for one call) and a call with no output stay on their own, in order.
 */
export function pairToolItems<T>(entries: readonly T[], itemOf: (entry: T) => unknown): DetailEntry<T>[] {
  const out: DetailEntry<T>[] = [];
  const open = new Map<string, number>();
  for (const entry of entries) {
    const item = itemOf(entry);
    const role = toolRole(item);
    const id = callIdOf(item);
    if (role === 'output' && id !== undefined && open.has(id)) {
      const at = open.get(id) as number;
      open.delete(id);
      const call = out[at] as { kind: 'item'; item: T };
      out[at] = { kind: 'pair', call: call.item, output: entry };
      continue;
    }
    if (role === 'call' && id !== undefined && !open.has(id)) open.set(id, out.length);
    out.push({ kind: 'item', item: entry });
  }
  return out;
}

// ---- built-in tools -----------------------------------------------------------------------------------------

/** One labelled field of a tool item; `code`: shown in a monospace block. */
export interface ToolField {
  label: string;
  text: string;
  code?: boolean;
}

/** What a renderer shows of a built-in tool item: the tool, its key fields, its images (data URLs only). */
export interface ToolItemView {
  tool: string;
  fields: ToolField[];
  images: string[];
  /** An image was there but not shown (a remote URL or too large): the reason, as text. */
  imageNote?: string;
}

/** Images larger than this (as data URL text) are not shown: a 10 MB data URL would stall the view. */
export const MAX_IMAGE_URL_CHARS = 8_000_000;

const DATA_IMAGE = /^data:image\/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * `value` as an image URL the view may show: a base64 `data:` URL of a raster type, not too large. Anything else
 * (http URLs, SVG, file ids) is undefined: the view never fetches.
 */
export function imageDataUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_IMAGE_URL_CHARS) return undefined;
  return DATA_IMAGE.test(value) ? value : undefined;
}

/** Bare base64 image data (image generation's `result`, a JS screenshot's `data`) as a data URL of `mediaType`. */
function base64Image(value: unknown, mediaType = 'image/png'): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.startsWith('data:')) return imageDataUrl(value);
  if (value.length < 8 || !BASE64.test(value)) return undefined;
  return imageDataUrl(`data:${/^image\/(png|jpeg|jpg|gif|webp)$/.test(mediaType) ? mediaType : 'image/png'};base64,${value}`);
}

/** Why an SVG image is not shown: it is a document, which can hold scripts and load other files. */
const svgNote = (): string => l10n.t('Image not shown: SVG images are never shown (they can hold scripts and links)');

/** Why an image-like value is not shown, if it is one. */
function imageNote(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  if (value.length > MAX_IMAGE_URL_CHARS) return l10n.t('Image not shown: too large');
  if (/^https?:/i.test(value)) return l10n.t('Image not shown (remote images are never loaded): {0}', value);
  if (/^data:image\/svg\+xml[;,]/i.test(value)) return svgNote();
  // Another type (BMP, TIFF…), or not base64: no less an image the user would miss without a word.
  if (/^data:image\//i.test(value)) return l10n.t('Image not shown: only PNG, JPEG, GIF and WebP images in base64 are shown');
  return undefined;
}

/**
 * The images in a tool output: Python's content parts (`{ type: 'input_image', image_url }`), the JS SDK's
 * (`{ type: 'image', image: 'data:…' | { data, mediaType } }`), a screenshot (`image_url`, or JS `data`).
 */
export function outputImages(output: unknown): { images: string[]; note?: string } {
  const images: string[] = [];
  let note: string | undefined;
  const take = (part: unknown): void => {
    if (!isRecord(part)) return;
    const candidates: unknown[] = [];
    if (part.type === 'input_image' || part.type === 'computer_screenshot' || part.type === 'image' || 'image_url' in part) {
      candidates.push(part.image_url, part.imageUrl);
      if (typeof part.image === 'string') candidates.push(part.image);
      if (isRecord(part.image)) {
        const mediaType = str(part.image.mediaType) ?? str(part.image.media_type);
        // SVG data is no PNG: shown as one it would be a broken image; it is not shown, and the note says why.
        const svg = /^image\/svg\+xml$/i.test(mediaType ?? '') && typeof part.image.data === 'string' && part.image.data !== '';
        const url = svg ? undefined : base64Image(part.image.data, mediaType);
        if (url) images.push(url);
        else note ??= svg ? svgNote() : imageNote(part.image.data);
        candidates.push(part.image.url);
      }
      if (part.type === 'computer_screenshot') {
        const url = base64Image(part.data);
        if (url) images.push(url);
        else note ??= imageNote(part.data);
      }
    }
    for (const c of candidates) {
      const url = imageDataUrl(c);
      if (url) images.push(url);
      else note ??= imageNote(c);
    }
  };
  if (Array.isArray(output)) output.forEach(take);
  else take(output);
  return note ? { images, note } : { images };
}

const compact = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
const field = (label: string, value: unknown, code = false): ToolField[] => {
  if (value === undefined || value === null || value === '') return [];
  const text = typeof value === 'string' ? value : prettyJson(value);
  return [code ? { label, text, code } : { label, text }];
};
const status = (item: Record<string, unknown>): ToolField[] => field(l10n.t('Status'), str(item.status));

/** A computer action as one line: `click (120, 340) left`, `type "hello"`, `keypress CTRL+C`. */
export function computerActionText(action: unknown): string {
  if (!isRecord(action)) return compact(action);
  const type = str(action.type) ?? 'action';
  const at = typeof action.x === 'number' && typeof action.y === 'number' ? ` (${action.x}, ${action.y})` : '';
  switch (type) {
    case 'click':
      return `click${at}${str(action.button) ? ` ${String(action.button)}` : ''}`;
    case 'double_click':
    case 'move':
      return `${type}${at}`;
    case 'scroll': {
      const dx = action.scroll_x ?? action.scrollX ?? 0;
      const dy = action.scroll_y ?? action.scrollY ?? 0;
      return `scroll${at} by (${compact(dx)}, ${compact(dy)})`;
    }
    case 'type':
      return `type ${JSON.stringify(typeof action.text === 'string' ? action.text : '')}`;
    case 'keypress':
      return `keypress ${Array.isArray(action.keys) ? action.keys.map(String).join('+') : ''}`;
    case 'drag':
      return `drag ${Array.isArray(action.path) ? action.path.map((p) => (isRecord(p) ? `(${compact(p.x)}, ${compact(p.y)})` : '')).join(' → ') : ''}`;
    case 'screenshot':
    case 'wait':
      return type;
    default: {
      const rest = Object.fromEntries(Object.entries(action).filter(([k]) => k !== 'type'));
      return Object.keys(rest).length ? `${type} ${compact(rest)}` : type;
    }
  }
}

/** The text of a web search's action: the query (or queries), the page opened, the pattern looked for. */
function webSearchFields(action: unknown): ToolField[] {
  if (!isRecord(action)) return [];
  const queries = Array.isArray(action.queries) ? action.queries.filter((q) => typeof q === 'string').join('\n') : undefined;
  const sources = Array.isArray(action.sources)
    ? action.sources
        .map((s) => (isRecord(s) ? (str(s.url) ?? str(s.title) ?? compact(s)) : compact(s)))
        .filter((s) => s !== '')
        .join('\n')
    : undefined;
  return [
    ...field(l10n.t('Action'), str(action.type)),
    ...field(l10n.t('Query'), str(action.query) ?? queries),
    ...field(l10n.t('URL'), str(action.url)),
    ...field(l10n.t('Pattern'), str(action.pattern)),
    ...field(l10n.t('Sources'), sources),
  ];
}

function fileSearchResults(results: unknown): string | undefined {
  if (!Array.isArray(results)) return undefined;
  return results
    .map((r) => {
      if (!isRecord(r)) return compact(r);
      const name = str(r.filename) ?? str(r.file_id) ?? 'file';
      const score = typeof r.score === 'number' ? ` (score ${r.score.toFixed(2)})` : '';
      const text = str(r.text);
      return `${name}${score}${text ? `: ${text.length > 300 ? text.slice(0, 300) + '…' : text}` : ''}`;
    })
    .join('\n');
}

function shellOutputText(output: unknown): string {
  if (!Array.isArray(output)) return outputText(output, { pretty: true });
  return output
    .map((o) => {
      if (!isRecord(o)) return compact(o);
      const lines: string[] = [];
      if (str(o.stdout)) lines.push(String(o.stdout));
      if (str(o.stderr)) lines.push(`[stderr] ${String(o.stderr)}`);
      const outcome = isRecord(o.outcome) ? o.outcome : undefined;
      if (outcome?.type === 'timeout') lines.push('[timed out]');
      const code = outcome?.exit_code ?? outcome?.exitCode;
      if (outcome?.type === 'exit' && code !== undefined) lines.push(`[exit code ${compact(code)}]`);
      return lines.join('\n');
    })
    .join('\n');
}

/** A patch operation as one line: `update_file src/a.ts → src/b.ts`. */
function patchOperation(op: unknown): ToolField[] {
  if (!isRecord(op)) return field(l10n.t('Operation'), op);
  const moveTo = str(op.move_to) ?? str(op.moveTo);
  return [
    ...field(l10n.t('Operation'), `${str(op.type) ?? 'operation'} ${str(op.path) ?? ''}${moveTo ? ` → ${moveTo}` : ''}`),
    ...field(l10n.t('Diff'), str(op.diff), true),
  ];
}

/**
 * The key fields of a built-in tool's item, by its type (Python and Responses API shapes, and the JS SDK's: its
 * `hosted_tool_call` keeps the raw item in `providerData`); undefined for anything else (messages, function calls and
 * outputs, reasoning), which the view renders itself.
 */
export function builtinToolView(item: unknown): ToolItemView | undefined {
  if (!isRecord(item) || typeof item.type !== 'string') return undefined;
  const view = (tool: string, fields: ToolField[], images: string[] = [], note?: string): ToolItemView =>
    note ? { tool, fields, images, imageNote: note } : { tool, fields, images };
  switch (item.type) {
    case 'computer_call':
      return view('computer', [
        ...field(l10n.t('Action'), item.action === undefined ? undefined : computerActionText(item.action)),
        ...status(item),
      ]);
    case 'computer_call_output':
    case 'computer_call_result': {
      const { images, note } = outputImages(item.output);
      const fields = images.length || note ? [] : field(l10n.t('Output'), outputText(item.output, { pretty: true }), true);
      return view('computer', fields, images, note);
    }
    case 'file_search_call':
      return view('file_search', [
        ...field(l10n.t('Queries'), Array.isArray(item.queries) ? item.queries.map(String).join('\n') : undefined),
        ...field(l10n.t('Results'), fileSearchResults(item.results)),
        ...status(item),
      ]);
    case 'web_search_call':
      return view('web_search', [...webSearchFields(item.action), ...status(item)]);
    case 'code_interpreter_call': {
      const images: string[] = [];
      let note: string | undefined;
      const logs: string[] = [];
      for (const o of Array.isArray(item.outputs) ? item.outputs : []) {
        if (!isRecord(o)) continue;
        if (o.type === 'logs' && typeof o.logs === 'string') logs.push(o.logs);
        if (o.type === 'image') {
          const url = imageDataUrl(o.url);
          if (url) images.push(url);
          else note ??= imageNote(o.url);
        }
      }
      return view(
        'code_interpreter',
        [
          ...field(l10n.t('Code'), str(item.code), true),
          ...field(l10n.t('Output'), logs.join('\n'), true),
          ...field(l10n.t('Container'), str(item.container_id)),
          ...status(item),
        ],
        images,
        note,
      );
    }
    case 'image_generation_call': {
      const url = base64Image(item.result, 'image/png');
      return view('image_generation', [...field(l10n.t('Revised prompt'), str(item.revised_prompt)), ...status(item)], url ? [url] : []);
    }
    case 'mcp_call':
      return view(mcpTool(item), [
        ...field(l10n.t('Server'), str(item.server_label)),
        ...field(l10n.t('Tool'), str(item.name)),
        ...field(l10n.t('Arguments'), item.arguments === undefined ? undefined : prettyJson(item.arguments), true),
        ...field(
          l10n.t('Output'),
          item.output === undefined || item.output === null ? undefined : outputText(item.output, { pretty: true }),
          true,
        ),
        ...field(l10n.t('Error'), item.error === null ? undefined : item.error),
      ]);
    case 'mcp_list_tools': {
      const tools = Array.isArray(item.tools)
        ? item.tools
            .map((t) => (isRecord(t) ? `${str(t.name) ?? '?'}${str(t.description) ? ` — ${String(t.description)}` : ''}` : compact(t)))
            .join('\n')
        : undefined;
      return view('mcp', [
        ...field(l10n.t('Server'), str(item.server_label)),
        ...field(l10n.t('Tools'), tools),
        ...field(l10n.t('Error'), item.error === null ? undefined : item.error),
      ]);
    }
    case 'mcp_approval_request':
      return view(mcpTool(item), [
        ...field(l10n.t('Server'), str(item.server_label)),
        ...field(l10n.t('Tool'), str(item.name)),
        ...field(l10n.t('Arguments'), item.arguments === undefined ? undefined : prettyJson(item.arguments), true),
      ]);
    case 'mcp_approval_response':
      return view('mcp', [
        ...field(l10n.t('Decision'), item.approve === true ? 'approved' : item.approve === false ? 'denied' : undefined),
        ...field(l10n.t('Reason'), str(item.reason)),
      ]);
    case 'local_shell_call': {
      const a = isRecord(item.action) ? item.action : {};
      const command = Array.isArray(a.command) ? a.command.map(String).join(' ') : str(a.command);
      return view('local_shell', [
        ...field(l10n.t('Command'), command, true),
        ...field(l10n.t('Working directory'), str(a.working_directory) ?? str(a.workingDirectory)),
        ...status(item),
      ]);
    }
    case 'local_shell_call_output':
      return view('local_shell', field(l10n.t('Output'), outputText(item.output, { pretty: true }), true));
    case 'shell_call': {
      const a = isRecord(item.action) ? item.action : {};
      return view('shell', [
        ...field(l10n.t('Commands'), Array.isArray(a.commands) ? a.commands.map(String).join('\n') : undefined, true),
        ...status(item),
      ]);
    }
    case 'shell_call_output':
      return view('shell', field(l10n.t('Output'), shellOutputText(item.output), true));
    case 'apply_patch_call':
      return view('apply_patch', [...patchOperation(item.operation), ...status(item)]);
    case 'apply_patch_call_output':
      return view('apply_patch', [...status(item), ...field(l10n.t('Output'), str(item.output), true)]);
    case 'tool_search_call':
      // The model looking up deferred tools (Responses API): what it asked for, and who ran the search.
      return view('tool_search', [
        ...field(l10n.t('Arguments'), item.arguments === undefined ? undefined : prettyJson(item.arguments), true),
        ...field(l10n.t('Execution'), str(item.execution)),
        ...status(item),
      ]);
    case 'tool_search_output': {
      const tools = Array.isArray(item.tools)
        ? item.tools.map((t) => (isRecord(t) ? (str(t.name) ?? str(t.type) ?? compact(t)) : compact(t))).join('\n')
        : undefined;
      return view('tool_search', [
        ...field(l10n.t('Tools found'), tools),
        ...field(l10n.t('Execution'), str(item.execution)),
        ...status(item),
      ]);
    }
    case 'hosted_tool_call': {
      // The JS SDK's record of a hosted tool: the Responses API item is in providerData when the SDK kept it.
      const raw = isRecord(item.providerData) ? item.providerData : undefined;
      const inner = raw && typeof raw.type === 'string' && raw.type !== 'hosted_tool_call' ? builtinToolView(raw) : undefined;
      if (inner) return inner;
      return view(str(item.name) ?? 'hosted tool', [
        ...field(l10n.t('Arguments'), item.arguments === undefined ? undefined : prettyJson(item.arguments), true),
        ...field(l10n.t('Output'), str(item.output), true),
        ...status(item),
      ]);
    }
    default:
      return undefined;
  }
}

function mcpTool(item: Record<string, unknown>): string {
  const server = str(item.server_label);
  const name = str(item.name);
  return server && name ? `${server}.${name}` : (name ?? 'mcp');
}

/** A one-line summary of a built-in tool item (its first field), for lists: `web_search: weather in Paris`. */
export function builtinToolSummary(item: unknown): string | undefined {
  const v = builtinToolView(item);
  if (!v) return undefined;
  const first = v.fields[0];
  const text = first
    ? first.text.replace(/\s+/g, ' ').trim()
    : v.images.length
      ? `${v.images.length} image${v.images.length === 1 ? '' : 's'}`
      : '';
  return text ? `${v.tool}: ${text}` : v.tool;
}

/** The tool a call or output is for, when the item names none: the built-in tool's name. */
export function pairedToolName(call: unknown, output: unknown, stored: { call: string | null; output: string | null }): string | null {
  return stored.call ?? stored.output ?? builtinToolView(call)?.tool ?? builtinToolView(output)?.tool ?? null;
}

/**
 * A turn-list preview as text: previews of structured user messages arrive as JSON of their content parts (the
 * store's spec §10.2 preview, cut at 100 code points, so possibly not parseable): their text parts, joined.
 */
export function previewText(preview: string): string {
  const t = preview.trimStart();
  if (!t.startsWith('[{') && !t.startsWith('{')) return preview;
  try {
    const parsed: unknown = JSON.parse(t);
    const text = messageText(Array.isArray(parsed) ? parsed : [parsed]);
    return text || preview;
  } catch {
    // Cut: take the complete "text" strings, and the start of the one the cut fell into.
    const parts: string[] = [];
    const re = /"(?:text|transcript)":\s*"((?:[^"\\]|\\.)*)("?)/g;
    for (let m = re.exec(t); m; m = re.exec(t)) {
      const closed = m[2] === '"';
      // The store marks a cut with "..."; a cut may also split an escape (`\`, `\u00`).
      const body = closed ? (m[1] as string) : (m[1] as string).replace(/\.\.\.$/, '').replace(/\\(u[0-9a-fA-F]{0,3})?$/, '');
      try {
        parts.push(JSON.parse(`"${body}"`) as string);
      } catch {
        parts.push(body);
      }
      if (!closed) return parts.join(' ').trimEnd() + '…';
    }
    return parts.length ? parts.join(' ') : preview;
  }
}
