/**
 * The query tools (src/store/query/queryTools.ts) as VS Code Language Model tools: their names, `#` references and
 * icons, and the `contributes.languageModelTools` entries package.json holds. The entries are generated from the
 * tool table, and test/unit/extension/codingAgents/lmToolManifest.test.ts holds package.json to them, so the
 * manifest, the registrations and the MCP server never describe a tool differently. No vscode import: the unit test
 * reads it.
 */
import { QUERY_TOOLS, toolInputSchema, type QueryTool } from '../../store/query/queryTools';

/**
 * The prefix of our tool names. VS Code refuses a second registration of a name, and `list_sessions` is a name
 * another extension could well take, so ours say whose they are (as VS Code's MCP tools do with `mcp_<server>_`).
 */
export const LM_TOOL_PREFIX = 'agentSessions_';

/** The id of the MCP server definition provider (package.json `mcpServerDefinitionProviders`). */
export const MCP_PROVIDER_ID = 'agentSessions.mcpServers';

/** A codicon for each tool, shown in the tool picker and the chat. */
const ICONS: Readonly<Record<string, string>> = {
  list_stores: '$(database)',
  list_sessions: '$(list-unordered)',
  branch_tree: '$(git-branch)',
  read_turns: '$(comment-discussion)',
  search_sessions: '$(search)',
  token_usage: '$(graph)',
  compare_branches: '$(diff)',
  turn_timeline: '$(watch)',
  turn_context: '$(layers)',
};

/** The Language Model tool name of a query tool: `agentSessions_read_turns`. */
export function lmToolName(tool: Pick<QueryTool, 'name'>): string {
  return `${LM_TOOL_PREFIX}${tool.name}`;
}

/** The query tool of a Language Model tool name, or undefined. */
export function queryToolOf(lmName: string): QueryTool | undefined {
  return lmName.startsWith(LM_TOOL_PREFIX) ? QUERY_TOOLS.find((t) => lmToolName(t) === lmName) : undefined;
}

/** What a user types after `#` to attach the tool in a chat prompt: the name in camelCase (`readTurns`). */
export function toolReferenceName(toolName: string): string {
  return toolName.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The icon of a tool (undefined for a tool the table above forgot: the unit test fails on it). */
export function toolIcon(toolName: string): string | undefined {
  return ICONS[toolName];
}

/** One `contributes.languageModelTools` entry. */
export interface LanguageModelToolEntry {
  name: string;
  displayName: string;
  modelDescription: string;
  userDescription: string;
  toolReferenceName: string;
  canBeReferencedInPrompt: true;
  icon: string;
  tags: string[];
  inputSchema: ReturnType<typeof toolInputSchema>;
}

/**
 * The entries package.json must hold, in the tool table's order. The model reads `modelDescription` and the input
 * schema exactly as the MCP server sends them; people read `displayName` and `userDescription`, which are localized
 * (`%lmTool.<name>.…%` in package.nls*.json).
 */
export function languageModelToolEntries(): LanguageModelToolEntry[] {
  return QUERY_TOOLS.map((tool) => ({
    name: lmToolName(tool),
    displayName: `%lmTool.${tool.name}.displayName%`,
    modelDescription: tool.description,
    userDescription: `%lmTool.${tool.name}.userDescription%`,
    toolReferenceName: toolReferenceName(tool.name),
    canBeReferencedInPrompt: true,
    icon: toolIcon(tool.name) ?? '$(database)',
    tags: ['agent-sessions', 'read-only'],
    inputSchema: toolInputSchema(tool),
  }));
}
