/**
 * How an item is titled for people, in the tree, the conversation view's cards and the turn list's tool badges: who
 * spoke or which tool ran ("User", "get_weather", "get_weather result", "web search"), not the stored type name
 * (`function_call_output`), which stays one hover away for people debugging the format. Localized with @vscode/l10n,
 * which reads the same bundle in the host and in the view; a tool's own name (a function's, an MCP server's) is never
 * translated.
 */
import * as l10n from '@vscode/l10n';
import { isMessageItem } from './itemText';

// Functions, so the text is looked up when drawn (after the bundle is loaded), with literal keys for the bundle test.
const ROLE_TITLES: Record<string, () => string> = {
  user: () => l10n.t('User'),
  assistant: () => l10n.t('Assistant'),
  system: () => l10n.t('System'),
  developer: () => l10n.t('Developer'),
};

/**
 * Built-in tools by their item's type, as people name them. The store's `tool_name` of a built-in tool is this type
 * too (`computer_call`; the JS SDK's `hosted_tool_call` names the type it stands for), except tool search's.
 */
const BUILTIN_TOOLS: Record<string, () => string> = {
  computer_call: () => l10n.t('computer'),
  web_search_call: () => l10n.t('web search'),
  file_search_call: () => l10n.t('file search'),
  code_interpreter_call: () => l10n.t('code interpreter'),
  image_generation_call: () => l10n.t('image generation'),
  local_shell_call: () => l10n.t('shell'),
  shell_call: () => l10n.t('shell'),
  apply_patch_call: () => l10n.t('apply patch'),
  tool_search_call: () => l10n.t('tool search'),
  mcp_call: () => 'MCP',
  mcp_list_tools: () => l10n.t('MCP tool list'),
  mcp_approval_request: () => l10n.t('MCP approval request'),
  mcp_approval_response: () => l10n.t('MCP approval'),
};

const own = (name: string): (() => string) | undefined =>
  Object.prototype.hasOwnProperty.call(BUILTIN_TOOLS, name) ? BUILTIN_TOOLS[name] : undefined;

/** Whether an item type answers a call (`function_call_output`, the JS SDK's `function_call_result`, …). */
export const isOutputType = (type: string): boolean => type.endsWith('_output') || type.endsWith('_result');

/**
 * The people name of a built-in tool, by its item type or the store's tool name for it (`web_search_call` → "web
 * search", `tool_search` → "tool search"); undefined for anything else, so a function's own name is never translated.
 */
export function builtinToolName(typeOrToolName: string): string | undefined {
  return (own(typeOrToolName) ?? (typeOrToolName === 'tool_search' ? own('tool_search_call') : undefined))?.();
}

/** A tool name as a turn's badge shows it: a built-in tool by its people name, any other tool as it is named. */
export function toolBadgeName(toolName: string): string {
  return builtinToolName(toolName) ?? toolName;
}

/**
 * An item's title: its role for a message ("User"; `item`, when given, decides, since the store types a system
 * message as `message`), "Reasoning", the tool a call runs ("get_weather", "web search", "MCP deepwiki.ask_question")
 * or "… result" for the output that answers it. `type` is the stored type; `toolName` the store's tool name, or the
 * call's for an output that stores none (a Python `function_call_output`).
 */
export function itemTitle(type: string, toolName: string | null, item?: unknown): string {
  const role = isMessageItem(item) ? item.role : type;
  const byRole = Object.prototype.hasOwnProperty.call(ROLE_TITLES, role) ? ROLE_TITLES[role] : undefined;
  if (byRole) return byRole();
  if (type === 'reasoning') return l10n.t('Reasoning');
  const output = isOutputType(type);
  const callType = output ? type.replace(/_(output|result)$/, '') : type;
  // The stored type names a built-in tool better than its tool name does; the JS SDK's hosted_tool_call names it.
  let builtin = (own(callType) ?? (output ? own(`${callType}_call`) : undefined) ?? own(type))?.();
  if (!builtin && type === 'hosted_tool_call' && toolName) builtin = (own(toolName) ?? own(`${toolName}_call`))?.();
  // An MCP call's tool name is the server's tool (`deepwiki.ask_question`): keep it, marked as MCP.
  const mcp = (type === 'mcp_call' || (type === 'hosted_tool_call' && toolName === 'mcp_call')) && toolName;
  const tool = mcp && toolName !== 'mcp_call' ? `MCP ${toolName}` : (builtin ?? toolName);
  if (output) return l10n.t('{0} result', tool ?? l10n.t('tool'));
  return tool ?? type.replace(/_/g, ' ');
}
