/**
 * An item of a model request's input as the Context tab counts it (docs/context.md): its kind, title and preview, the
 * text whose tokens are counted, and a key that finds the stored item a recorded one is.
 */
import type { ContextItemKind } from '../../shared/protocol/contextViews';
import { CONTEXT_PREVIEW_CHARS } from '../../shared/protocol/contextViews';
import { callArguments, isMessageItem, isRecord, itemPreview, itemType, messageText, oneLine, outputText } from '../../shared/itemText';
import { isOutputType, itemTitle } from '../../shared/itemTitles';
import { TOOL_CALL_MESSAGE_TYPES } from '../format/itemClassification';

export interface CountedItem {
  kind: ContextItemKind;
  /** The text the model reads of it (what is tokenized). */
  text: string;
  /** Finds the same item stored and recorded (see `itemKey`). */
  key: string;
  /** Its title and preview, made only for the items an answer lists (a long history has thousands). */
  describe(): { title: string; preview: string };
  /**
   * It holds an image, a file or audio: the model reads those as tokens we cannot count (they depend on the size and
   * detail, or on the file's pages), so only their placeholder is counted and the count is an approximation.
   */
  approximate?: boolean;
}

const callIdOf = (r: Record<string, unknown>): string | null =>
  typeof r.call_id === 'string' ? r.call_id : typeof r.callId === 'string' ? r.callId : null;

/** What kind of item it is, for the shares. */
export function kindOf(item: unknown): ContextItemKind {
  if (isMessageItem(item)) {
    if (item.role === 'user') return 'user';
    if (item.role === 'assistant') return 'assistant';
    return 'system';
  }
  const type = itemType(item);
  if (type === 'reasoning') return 'reasoning';
  if (type === 'compaction' || type === 'compaction_summary') return 'compaction';
  if (isOutputType(type)) return 'tool-output';
  if (TOOL_CALL_MESSAGE_TYPES.includes(type) || type.endsWith('_call') || type === 'hosted_tool_call') return 'tool-call';
  return 'other';
}

/** A content part with no text of its own (an image, a file, audio), which `messageText` shows as a placeholder. */
const isUncountedPart = (part: unknown): boolean =>
  isRecord(part) && typeof part.text !== 'string' && typeof part.refusal !== 'string' && typeof part.transcript !== 'string';

/** An output that is an image or a file itself (a computer call's screenshot) rather than text or parts. */
const isMediaOutput = (output: unknown): boolean =>
  isRecord(output) && typeof output.text !== 'string' && typeof output.type === 'string' && /image|file|screenshot|audio/.test(output.type);

/** Whether the item carries content whose tokens are not counted (`CountedItem.approximate`). */
function hasUncounted(item: unknown, kind: ContextItemKind): boolean {
  if (!isRecord(item)) return false;
  if (kind === 'user' || kind === 'assistant' || kind === 'system')
    return Array.isArray(item.content) && item.content.some(isUncountedPart);
  if (kind === 'tool-output') return Array.isArray(item.output) ? item.output.some(isUncountedPart) : isMediaOutput(item.output);
  return false;
}

/** The text of an item the model reads: a message's text, a call's name and arguments, an output's text. */
function textOf(item: unknown, kind: ContextItemKind): string {
  if (!isRecord(item)) return JSON.stringify(item) ?? '';
  switch (kind) {
    case 'user':
    case 'assistant':
    case 'system':
      return messageText(item.content);
    case 'tool-call': {
      const args = callArguments(item);
      if (args !== undefined) return `${typeof item.name === 'string' ? item.name : ''}${args}`;
      break;
    }
    case 'tool-output':
      // A screenshot's JSON is mostly a data URL: counting it as text would give the image tens of thousands of tokens.
      return isMediaOutput(item.output) ? `[${String((item.output as { type: string }).type)}]` : outputText(item.output);
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? messageText(item.summary) : '';
      return summary || messageText(item.content);
    }
    case 'compaction':
      // Its summary is encrypted: the model's count of it is not known (docs/context.md).
      return '';
    default:
      break;
  }
  const { id: _id, status: _status, ...rest } = item;
  return JSON.stringify(rest) ?? '';
}

/**
 * The key a stored item and the same item recorded share: a message by its role and text, a call or its output by its
 * call id, anything else by its JSON without ids. The SDKs and the API shape the same item differently (content as a
 * string or as parts, `callId` or `call_id`); the key reads through that.
 */
export function itemKey(item: unknown, kind: ContextItemKind, text: string): string {
  const r = isRecord(item) ? item : {};
  const callId = callIdOf(r);
  if (kind === 'tool-call' && callId) return `call:${callId}`;
  if (kind === 'tool-output' && callId) return `output:${callId}`;
  if (kind === 'user' || kind === 'assistant' || kind === 'system') return `${kind}:${text}`;
  if (typeof r.id === 'string' && r.id !== '') return `${kind}#${r.id}`;
  return `${kind}=${text}`;
}

/** An input item, counted; `toolName` is the store's (an output's call's name, which the output itself lacks). */
export function countedItem(item: unknown, toolName: string | null = null): CountedItem {
  const kind = kindOf(item);
  const text = textOf(item, kind);
  const r = isRecord(item) ? item : {};
  const type = itemType(item);
  const tool = typeof r.name === 'string' ? r.name : toolName;
  let described: { title: string; preview: string } | undefined;
  return {
    kind,
    text,
    key: itemKey(item, kind, text),
    ...(hasUncounted(item, kind) ? { approximate: true } : {}),
    // Made once: the requests of a turn list the same items again.
    describe: () =>
      (described ??= {
        title: kind === 'compaction' ? 'Compaction' : itemTitle(type, tool, item),
        preview: kind === 'compaction' ? '' : oneLine(itemPreview(item), CONTEXT_PREVIEW_CHARS),
      }),
  };
}

/** The instructions, as the first "item" of a recorded request. */
export function instructionsItem(text: string): CountedItem {
  return {
    kind: 'instructions',
    text,
    key: 'instructions',
    describe: () => ({ title: 'Instructions', preview: oneLine(text.slice(0, 4 * CONTEXT_PREVIEW_CHARS), CONTEXT_PREVIEW_CHARS) }),
  };
}

/** The tool definitions, as one "item" of a recorded request. */
export function toolsItem(tools: readonly unknown[]): CountedItem {
  const names = tools.map((t) =>
    isRecord(t) && typeof t.name === 'string' ? t.name : isRecord(t) && typeof t.type === 'string' ? t.type : '?',
  );
  return {
    kind: 'tool-definitions',
    text: JSON.stringify(tools),
    key: 'tools',
    describe: () => ({ title: `Tools (${tools.length})`, preview: oneLine(names.join(', '), CONTEXT_PREVIEW_CHARS) }),
  };
}
