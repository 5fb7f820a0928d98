/**
 * Markdown transcripts of stored items: one turn (the conversation view's *Copy Turn as Markdown*), a branch, or a
 * whole session (see `sessionExport.ts`). Item text comes from `src/shared/itemText.ts`, the one owner of how items
 * read as text. The output is meant for people (bug reports, notes): messages as their text, tool calls and outputs in
 * fenced blocks labelled with the tool's name, reasoning as its summary only.
 *
 * Everything a session holds is anyone's text (a web page a tool fetched, a reply steered by one), and a transcript is
 * opened in Markdown previews, pasted into issues and read by models (MCP `read_turns`). So session text can never
 * make the transcript's structure or load anything when rendered: messages and reasoning are blockquotes (every line
 * `> `, so a `## Turn 4` or `**User**` inside is a line of the quote); their code blocks are fenced again by us; outside
 * those, an image (`![`) is written `!\[` (its text and a link, never fetched) and a `<` that could open an HTML tag,
 * comment or autolink is escaped (`\<`). Links stay links: one is followed only when the reader clicks it. Tool
 * arguments and outputs are in fences the text cannot close (`fenced`); names, ids and times on our own lines are
 * one line each (`inlineCode`, `inlineText`).
 */
import {
  callArguments,
  displayType,
  isMessageItem,
  isRecord,
  itemType,
  messageText,
  outputText,
  prettyJson,
  toolName,
} from '../../shared/itemText';
import { itemTitle, toolBadgeName } from '../../shared/itemTitles';
import { callIdOf, toolRole } from '../../shared/toolItems';
import { toolNameOf } from '../format/itemClassification';
import type { ItemEntry } from '../inspector/inspectorTypes';

/** How `turnToMarkdown` titles a turn. */
export interface TurnMarkdownOptions {
  /** The heading level of the turn's title (1–6; default 2). Items are not headings, so they never clutter an outline. */
  headingLevel?: number;
  /** Text after "Turn n" in the heading, e.g. the branch (default none). */
  suffix?: string;
}

const ROLE_TITLES: Record<string, string> = { user: 'User', assistant: 'Assistant', system: 'System', developer: 'Developer' };

/**
 * One turn as Markdown: a heading (`## Turn 3`, or `## Before the first turn` for turn 0) with the time of its first
 * item, then each item. Ends with one newline.
 */
export function turnToMarkdown(turn: number, items: readonly ItemEntry[], options: TurnMarkdownOptions = {}): string {
  const level = Math.min(6, Math.max(1, Math.trunc(options.headingLevel ?? 2)));
  const title = turn === 0 ? 'Before the first turn' : `Turn ${turn}`;
  const time = items.find((e) => e.createdAt !== null)?.createdAt;
  const lines = [`${'#'.repeat(level)} ${title}${options.suffix ? ` ${inlineText(options.suffix)}` : ''}`];
  if (time) lines.push('', `_${inlineText(time)}_`);
  // An output written by Python names no tool, and stores without structure rows record none: take its call's.
  const callNames = new Map<string, string>();
  for (const entry of items) lines.push('', itemToMarkdown(namedByItsCall(entry, callNames)));
  return `${lines.join('\n')}\n`;
}

/** One stored item as a Markdown block (no heading). */
export function itemToMarkdown(entry: ItemEntry): string {
  if (entry.corrupt) {
    // The parser's message may quote the stored text.
    const label = `**Unreadable item** (${inlineText(displayType(entry.type))}): ${inlineText(entry.error)}`;
    return entry.raw === null ? label : `${label}\n\n${fenced(entry.raw, 'text')}`;
  }
  const item = entry.item;
  if (isMessageItem(item)) {
    const role = ROLE_TITLES[item.role] ?? item.role;
    const text = messageText(item.content);
    return `**${role}**\n\n${text === '' ? '_(empty)_' : quoted(text)}`;
  }
  if (!isRecord(item)) return fenced(prettyJson(item), 'json');
  const type = itemType(item);
  const name = entry.toolName ?? toolName(item);
  switch (type) {
    case 'function_call':
    case 'custom_tool_call': {
      const args = callArguments(item) ?? '';
      return `**Tool call** ${inlineCode(toolBadgeName(name))}${callIdNote(item)}\n\n${fenced(prettyJson(args), `${looksJson(args) ? 'json' : 'text'} ${name}`)}`;
    }
    case 'function_call_output':
    case 'function_call_result':
    case 'custom_tool_call_output':
    case 'computer_call_output':
    case 'computer_call_result': {
      const text = outputText(item.output, { pretty: true });
      return `**Tool output** ${inlineCode(toolBadgeName(name))}${callIdNote(item)}\n\n${fenced(text, `${looksJson(text) ? 'json' : 'text'} ${name}`)}`;
    }
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? messageText(item.summary) : '';
      const text = summary || messageText(item.content);
      if (!text) return '> **Reasoning** _(no summary)_';
      // The label goes on the quote's first line, unless that line is a code fence (which must start its line).
      const body = quoted(text);
      return /^> (`{3}|~{3})/.test(body) ? `> **Reasoning:**\n>\n${body}` : `> **Reasoning:**${body.slice(1)}`;
    }
    default: {
      // Built-in tool calls (web search, file search, computer, MCP, …) and anything newer: their fields as JSON.
      // Titled as the tree and the view title it (src/shared/itemTitles.ts), with the stored type for searching.
      const { type: _type, ...rest } = item;
      const title = itemTitle(type, entry.toolName, item);
      return `**${inlineText(title)}** (${inlineCode(displayType(type))})${callIdNote(item)}\n\n${fenced(prettyJson(rest), `json ${name}`)}`;
    }
  }
}

function callIdNote(item: Record<string, unknown>): string {
  const id = item.call_id ?? item.callId;
  return typeof id === 'string' && id !== '' ? ` (${inlineCode(id)})` : '';
}

function looksJson(text: string): boolean {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Base64 data URLs (screenshots, generated images) shortened: a transcript is for reading, not for the bytes. */
function shortenDataUrls(text: string): string {
  const size = (data: string) => Math.floor((data.length * 3) / 4);
  return (
    text
      .replace(/data:([\w/+.-]+);base64,([A-Za-z0-9+/=]{64,})/g, (_m, mime: string, data: string) => {
        return `data:${mime};base64,${data.slice(0, 16)}… (${size(data)} bytes)`;
      })
      // A bare base64 string value (an image generation's result): long and unbroken, so never prose.
      .replace(/"([A-Za-z0-9+/]{200,}={0,2})"/g, (_m, data: string) => `"${data.slice(0, 16)}… (${size(data)} bytes of base64)"`)
  );
}

/** A fenced code block whose fence is longer than any backtick run in `text`, so stored text can never close it. */
export function fenced(raw: string, info: string): string {
  const text = shortenDataUrls(raw);
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info.replace(/[`\r\n]/g, ' ')}\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`;
}

/** Inline code that survives backticks inside (CommonMark: a longer backtick string and padding spaces). */
export function inlineCode(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  const pad = longest > 0 ? ' ' : '';
  return `${ticks}${pad}${text.replace(/\r\n|[\r\n]/g, ' ')}${pad}${ticks}`;
}

/** Line endings as CommonMark reads them: a lone carriage return ends a line too. */
const LINE_END = /\r\n|\r|\n/;

/**
 * Session text made inert as Markdown inline text: `![` becomes `!\[` (the image's text, then a link: nothing is
 * fetched), and a `<` that could open an HTML tag, a comment, a declaration or an autolink gets a backslash (one
 * already escaped, after an odd run of backslashes, stays as it is). Links are left: a reader follows one by clicking.
 */
function inert(text: string): string {
  return text.replace(/!\[/g, '!\\[').replace(/(?<!\\)((?:\\\\)*)<(?=[A-Za-z/!?])/g, '$1\\<');
}

/** Session text on one of our lines (a title, a heading's suffix, a time): one line, inert. */
export function inlineText(text: string): string {
  return inert(text.replace(/\r\n|[\r\n]/g, ' '));
}

/**
 * Session text (a message, a reasoning summary) as a blockquote: every line `> ` (`>` alone when empty), so nothing in
 * it starts a line of the transcript, and every line made `inert` but those of its fenced code blocks, which are
 * fenced again by us: at the quote's left edge, with a fence longer than any run of its character inside, so the
 * text's own block structure (a fence in a list item, say) cannot leave one of our code lines outside a code block.
 * A fence never closed runs to the end of the text, as CommonMark reads it.
 */
function quoted(text: string): string {
  const lines = text.split(LINE_END);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    const indent = open?.[1] ?? '';
    const marks = open?.[2] ?? '';
    const info = open?.[3] ?? '';
    const char = marks.charAt(0);
    // A backtick fence's info string holds no backtick (else the line is text with code in it).
    if (!open || (char === '`' && info.includes('`'))) {
      out.push(inert(lines[i]!));
      continue;
    }
    const close = new RegExp(`^ {0,3}${char === '`' ? '`' : '~'}{${marks.length},}[ \\t]*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    // The opening fence's indentation comes off its lines, as CommonMark takes it off.
    const body = lines.slice(i + 1, end).map((l) => l.replace(new RegExp(`^ {0,${indent.length}}`), ''));
    const longest = Math.max(0, ...body.flatMap((l) => Array.from(l.matchAll(char === '`' ? /`+/g : /~+/g), (m) => m[0].length)));
    const fence = char.repeat(Math.max(marks.length, longest + 1));
    // The info string as it was after the marks (a tilde fence's may start with a space, then tildes).
    out.push(`${fence}${info.trimEnd()}`, ...body, fence);
    i = end;
  }
  return out.map((l) => (l === '' ? '>' : `> ${l}`)).join('\n');
}

/**
 * `entry`, with the tool name of the call it answers when it has none. Remembers each call's name until its output
 * comes (a call has one output), so `callNames` holds only the calls still unanswered: a whole branch's calls, kept to
 * the end, were about 10 MB of the Markdown export of the benchmarks' file A (100,000 calls on `main`).
 */
export function namedByItsCall(entry: ItemEntry, callNames: Map<string, string>): ItemEntry {
  if (entry.corrupt) return entry;
  const id = callIdOf(entry.item);
  if (id === undefined) return entry;
  const role = toolRole(entry.item);
  if (role === 'call') {
    const name = entry.toolName ?? toolNameOf(entry.item);
    if (name) callNames.set(id, name);
  } else if (role === 'output') {
    const name = callNames.get(id);
    callNames.delete(id);
    if (name && !entry.toolName) return { ...entry, toolName: name };
  }
  return entry;
}
