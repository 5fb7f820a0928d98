/**
 * The dataset formats' rules, checked record by record (docs/datasets.md). Written from the published formats, not from
 * our writer, so a writer bug shows as a broken rule: OpenAI's supervised fine-tuning chat format (`messages` of the
 * system, user, assistant and tool roles: the API's Chat Completions message params without `developer`, which its
 * training files do not take; content as text or the parts each role's param takes, images in user messages only, as
 * fine-tuning allows; `tool_calls` answered by `tool` messages with their ids, arguments as JSON text, `weight` 0 or 1
 * on assistant messages, optional `tools`), OpenAI's preference fine-tuning format (`input.messages` ending with the
 * user's message, one assistant message on each side, the two sides different), and our evaluation set.
 */
import type { ChatMessage } from './chatMessages';

export type DatasetFormat = 'sft' | 'preference' | 'eval';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * The content parts each role's message takes (openai-node's `ChatCompletion…MessageParam`): text everywhere, a refusal
 * in an assistant's, an image in a user's (fine-tuning takes "text or image content only", so no audio or file).
 */
const PARTS: Record<string, readonly string[]> = {
  system: ['text'],
  user: ['text', 'image_url'],
  assistant: ['text', 'refusal'],
  tool: ['text'],
};

/** The problems of one content part (`at` names it) a message of `role` holds. */
function partProblems(part: unknown, role: string, at: string): string[] {
  const allowed = PARTS[role] ?? [];
  if (!isObj(part) || !allowed.includes(String(part.type)))
    return [
      `${at} must be a content part of type ${allowed.map((t) => `"${t}"`).join(' or ')} in ${role === 'assistant' ? 'an' : 'a'} ${role} message`,
    ];
  if (part.type === 'text' && typeof part.text !== 'string') return [`${at}.text must be text`];
  if (part.type === 'refusal' && typeof part.refusal !== 'string') return [`${at}.refusal must be text`];
  if (part.type === 'image_url') {
    const image = part.image_url;
    if (!isObj(image) || typeof image.url !== 'string' || image.url === '') return [`${at}.image_url needs a url`];
    if (image.detail !== undefined && !['auto', 'low', 'high'].includes(String(image.detail)))
      return [`${at}.image_url.detail must be "auto", "low" or "high"`];
  }
  return [];
}

/** The problems of a message's content: text, or a non-empty list of the parts its role takes. */
function contentProblems(content: unknown, role: string, at: string): string[] {
  if (typeof content === 'string') return [];
  if (!Array.isArray(content) || content.length === 0) return [`${at}.content must be text or a non-empty list of content parts`];
  return content.flatMap((p, j) => partProblems(p, role, `${at}.content[${j}]`));
}

/** The problems of one message list (empty: none), with each message's index. */
function messageProblems(messages: unknown, toolNames: Set<string> | null): string[] {
  if (!Array.isArray(messages) || messages.length === 0) return ['messages must be a non-empty list'];
  const problems: string[] = [];
  const open = new Set<string>();
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObj(m)) return void problems.push(`${at} is not an object`);
    if (!ROLES.has(String(m.role)))
      return void problems.push(
        `${at}.role "${String(m.role)}" is not system, user, assistant or tool` +
          (m.role === 'developer' ? ' (fine-tuning files take the instructions as a system message)' : ''),
      );
    const role = String(m.role);
    if (role === 'tool') {
      if (typeof m.tool_call_id !== 'string' || !open.delete(m.tool_call_id))
        problems.push(`${at} answers no open tool call (${String(m.tool_call_id)})`);
      problems.push(...contentProblems(m.content, role, at));
      return;
    }
    if (open.size > 0) problems.push(`${at} comes before the output of tool call ${[...open][0]}`);
    open.clear();
    if (role !== 'assistant') return void problems.push(...contentProblems(m.content, role, at));
    const calls = m.tool_calls;
    // An assistant's content is optional (null or absent) when it calls tools, as in OpenAI's own example.
    const noContent = m.content === null || m.content === undefined;
    if (!noContent) problems.push(...contentProblems(m.content, role, at));
    if (noContent && (!Array.isArray(calls) || calls.length === 0)) problems.push(`${at} has neither content nor tool_calls`);
    if (m.weight !== undefined && m.weight !== 0 && m.weight !== 1) problems.push(`${at}.weight must be 0 or 1`);
    if (calls === undefined) return;
    if (!Array.isArray(calls)) return void problems.push(`${at}.tool_calls must be a list`);
    calls.forEach((c, j) => {
      const cat = `${at}.tool_calls[${j}]`;
      if (!isObj(c) || typeof c.id !== 'string' || c.id === '') return void problems.push(`${cat} needs an id`);
      if (c.type !== 'function') problems.push(`${cat}.type must be "function"`);
      const f = c.function;
      if (!isObj(f) || typeof f.name !== 'string' || f.name === '') return void problems.push(`${cat}.function needs a name`);
      if (typeof f.arguments !== 'string') problems.push(`${cat}.function.arguments must be JSON text`);
      else {
        try {
          JSON.parse(f.arguments);
        } catch {
          problems.push(`${cat}.function.arguments is not valid JSON`);
        }
      }
      if (toolNames && !toolNames.has(f.name)) problems.push(`${cat} calls ${f.name}, which "tools" does not define`);
      open.add(c.id);
    });
  });
  if (open.size > 0) problems.push(`tool call ${[...open][0]} has no output`);
  return problems;
}

/** The problems of a list of tool definitions (a record's `tools`, or `dataset --tools`), and the tools' names. */
export function toolsProblems(tools: unknown): { problems: string[]; names: Set<string> | null } {
  if (tools === undefined) return { problems: [], names: null };
  if (!Array.isArray(tools)) return { problems: ['tools must be a list'], names: null };
  const names = new Set<string>();
  const problems: string[] = [];
  tools.forEach((t, i) => {
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function) || typeof t.function.name !== 'string')
      problems.push(`tools[${i}] must be { "type": "function", "function": { "name": … } }`);
    else names.add(t.function.name);
  });
  return { problems, names };
}

/** A supervised fine-tuning record's problems (empty: valid). */
export function sftProblems(record: unknown): string[] {
  if (!isObj(record)) return ['a record must be an object'];
  const unknown = Object.keys(record).filter((k) => !['messages', 'tools', 'parallel_tool_calls'].includes(k));
  const tools = toolsProblems(record.tools);
  const problems = [...unknown.map((k) => `unknown key "${k}"`), ...tools.problems, ...messageProblems(record.messages, tools.names)];
  const messages = Array.isArray(record.messages) ? (record.messages as Obj[]) : [];
  if (!messages.some((m) => isObj(m) && m.role === 'assistant' && m.weight !== 0))
    problems.push('no assistant message to learn from (weight 1)');
  return problems;
}

/** The text of a message's content (text, or its text and refusal parts), or null when it is neither. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.length === 0) return null;
  const texts = content.map((p) =>
    isObj(p) && p.type === 'text' && typeof p.text === 'string'
      ? p.text
      : isObj(p) && p.type === 'refusal' && typeof p.refusal === 'string'
        ? p.refusal
        : null,
  );
  return texts.every((t) => t !== null) ? texts.join('') : null;
}

function outputProblems(name: string, output: unknown): string[] {
  if (!Array.isArray(output) || output.length === 0) return [`${name} must be a non-empty list of assistant messages`];
  return output.flatMap((m, i) =>
    !isObj(m) || m.role !== 'assistant' || !contentText(m.content) || m.tool_calls !== undefined
      ? [`${name}[${i}] must be an assistant message with text content`]
      : [],
  );
}

/** A preference fine-tuning record's problems (empty: valid). */
export function preferenceProblems(record: unknown): string[] {
  if (!isObj(record)) return ['a record must be an object'];
  const problems = Object.keys(record)
    .filter((k) => !['input', 'preferred_output', 'non_preferred_output'].includes(k))
    .map((k) => `unknown key "${k}"`);
  const input = record.input;
  if (!isObj(input)) problems.push('input must be an object with messages');
  else {
    const tools = toolsProblems(input.tools);
    problems.push(...tools.problems, ...messageProblems(input.messages, tools.names).map((p) => `input.${p}`));
    const messages = Array.isArray(input.messages) ? input.messages : [];
    const last = messages[messages.length - 1] as Obj | undefined;
    if (last && last.role !== 'user') problems.push('input.messages must end with the user message the outputs answer');
  }
  problems.push(
    ...outputProblems('preferred_output', record.preferred_output),
    ...outputProblems('non_preferred_output', record.non_preferred_output),
  );
  if (JSON.stringify(record.preferred_output) === JSON.stringify(record.non_preferred_output))
    problems.push('the preferred and non-preferred outputs are the same');
  return problems;
}

/** An evaluation record's problems (empty: valid). */
export function evalProblems(record: unknown): string[] {
  if (!isObj(record)) return ['a record must be an object'];
  const problems = messageProblems(record.input, null).map((p) => `input: ${p}`);
  const input = Array.isArray(record.input) ? (record.input as Obj[]) : [];
  if (input.length > 0 && input[input.length - 1]?.role !== 'user') problems.push('input must end with the user message');
  if (typeof record.reference !== 'string' || record.reference === '') problems.push('reference must be non-empty text');
  if (!Array.isArray(record.tags) || record.tags.some((t) => typeof t !== 'string')) problems.push('tags must be a list of text');
  const s = record.source;
  if (!isObj(s) || typeof s.sessionId !== 'string' || typeof s.branchId !== 'string' || !Number.isInteger(s.turn))
    problems.push('source must name the session, branch and turn');
  return problems;
}

export const RECORD_CHECKS: Record<DatasetFormat, (record: unknown) => string[]> = {
  sft: sftProblems,
  preference: preferenceProblems,
  eval: evalProblems,
};

/** Checks a JSONL file's text: each line's problems, by line number (1-based); empty when every record is valid. */
export function checkJsonl(format: DatasetFormat, text: string): { records: number; problems: { line: number; problems: string[] }[] } {
  const problems: { line: number; problems: string[] }[] = [];
  let records = 0;
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    records++;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      problems.push({ line: i + 1, problems: ['not valid JSON'] });
      return;
    }
    const p = RECORD_CHECKS[format](record);
    if (p.length > 0) problems.push({ line: i + 1, problems: p });
  });
  return { records, problems };
}

export type { ChatMessage };
