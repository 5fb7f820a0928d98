/**
 * Plain-JSON view models the conversation view renders. The host builds them from the store; the webview only
 * reads them. Every string in them is untrusted text from a database: render it as text.
 */

/** One branch on the map, with where it forked. */
export interface BranchView {
  branchId: string;
  parentBranchId: string | null;
  forkTurn: number | null;
  userTurns: number;
  /** True when `userTurns` is only a lower bound (a long session in a server store). */
  userTurnsAtLeast?: boolean;
  messageCount: number;
  createdAt: string | null;
  isCurrent: boolean;
}

/**
 * One user turn in the list. Turn 0 is "Before the first turn": the items stored before the first user message (the
 * agent's instructions, as a rule), listed first on a page that starts the branch, never branchable.
 */
export interface TurnView {
  turn: number;
  /** What `createBranchFromTurn` takes; null when the file records none (plain sessions). */
  branchTurnNumber: number | null;
  preview: string;
  /** Why the turn's user message cannot be read (shown instead of a preview), or null. */
  error: string | null;
  /** When the user message was first stored (a shared turn's original time, not the time it was copied). */
  createdAt: string | null;
  /** From the usage row of the branch that ran the turn (`sharedFrom` for a shared turn); null without a row. */
  totalTokens: number | null;
  itemCount: number;
  /** Distinct tools called in the turn, by name. */
  tools: string[];
  /**
   * Set on a turn the branch shares with an ancestor (before its fork turn): the branch that ran it
   * (`turnOrigin` in src/shared/turnOrigin.ts; a grandparent for nested forks). Absent on the branch's own turns.
   */
  sharedFrom?: string;
}

/** A page of turns of one branch. */
export interface TurnPageView {
  branchId: string;
  /** In ascending turn order, whichever way the page was read. */
  turns: TurnView[];
  /** Pass as `afterTurn` for the page after this one; null when this page ends at the branch's last turn. */
  nextAfterTurn: number | null;
  /**
   * Pass as `beforeTurn` for the page before this one; null when nothing comes before it (a page from the start, or a
   * page read backwards that reached the first turn). A page read forwards from a cursor gives its first turn.
   */
  previousBeforeTurn: number | null;
}

/** One item of a turn, decoded or unreadable. */
export type ItemView =
  | {
      sequenceNumber: number;
      type: string;
      toolName: string | null;
      createdAt: string | null;
      corrupt: false;
      /** The stored item as JSON text (pretty-printed), for "raw JSON". */
      json: string;
      item: unknown;
    }
  | {
      sequenceNumber: number;
      type: string;
      toolName: string | null;
      createdAt: string | null;
      corrupt: true;
      raw: string | null;
      error: string;
    };

/** The token counts of a usage row, in the order the Tokens table shows them. */
export const USAGE_COUNT_KEYS = ['requests', 'inputTokens', 'outputTokens', 'totalTokens', 'cachedTokens', 'reasoningTokens'] as const;
export type UsageCountKey = (typeof USAGE_COUNT_KEYS)[number];

/**
 * Token usage of one turn of one branch: the store's `UsageRow` passed through. The webview cannot import the store,
 * so this is written again here; `conversationData.tables` assigns one to the other, and the compiler keeps them in step.
 */
export type TurnUsageView = { branchId: string; turn: number } & { [K in UsageCountKey]: number | null } & {
  /**
   * A branch's shared turn (branch scope only): the branch that ran it and holds this row; `branchId` is the branch
   * shown. The session scope lists each row once, under the branch that holds it, without this field.
   */
  sharedFrom?: string;
  /** USD at the session's pricing model (src/shared/pricing.ts); null: no price for the model, or no counts. */
  cost?: number | null;
  /** The turn's latency and model requests from its traces (src/extension/traces/turnLatency.ts); null: no trace. */
  latencyMs?: number | null;
  tracedRequests?: number | null;
};

/** Tool usage: one row per tool. */
export interface ToolUsageView {
  toolName: string;
  calls: number;
  /** The first turns it ran in (a few, not all: a tool of a long session runs in thousands). */
  turns: number[];
  /** The whole session's table: those turns with the branch that ran each (turn numbers repeat across branches). */
  branchTurns?: { branchId: string; turn: number }[];
  turnCount: number;
}

/** The columns the Tokens table can be sorted by (the host sorts: the view holds one page). */
export const USAGE_SORT_KEYS = ['turn', 'branchId', ...USAGE_COUNT_KEYS] as const;
export type UsageSortKey = (typeof USAGE_SORT_KEYS)[number];

/** Which page of the Tokens table the view shows: the order and the first row (`tables/get`'s `usage`). */
export interface UsageWindow {
  sort: UsageSortKey;
  descending: boolean;
  offset: number;
  /** Rows per page (the host clamps it to 1…`MAX_USAGE_REQUEST`). */
  limit: number;
}

/** One page of the usage rows of a scope, with the scope's row count and totals (summed by SQLite, not from the page). */
export interface UsagePageView {
  rows: TurnUsageView[];
  rowCount: number;
  /** Where `rows` starts in the scope's order: the offset asked for, or the last page's when that is past the end. */
  offset: number;
  sort: UsageSortKey;
  descending: boolean;
  /** `cost`: of the whole scope (cost is linear in the counts, so the cost of the totals is the sum of the rows'). */
  totals: { [K in UsageCountKey]: number | null } & { cost?: number | null };
}

/** How the Tokens tab prices usage: the session's pricing model, whether the table has a price for it, the table's date. */
export interface PricingView {
  /** The model the session is priced as (chosen per session; default: the configured agent model). */
  model: string | null;
  /** False: no price for `model`, so the view shows tokens only with a hint to set the pricing model. */
  known: boolean;
  /** When the price table's figures were taken, and from where. */
  date: string;
  source: string;
}

/** The tool totals of one scope (`tools/get`): the Tools tab has its own scope, apart from the Tokens tab's. */
export interface ToolsView {
  /** null: the whole session. */
  branchId: string | null;
  tools: ToolUsageView[];
}

/** The usage and tool tables of one branch, or of the whole session (`branchId` null). */
export interface TablesView {
  branchId: string | null;
  usage: UsagePageView;
  /** The first own turns (not copied from a parent branch) without a usage row: the agent never called storeRunUsage. */
  turnsWithoutUsage: { branchId: string; turn: number }[];
  /** How many such turns there are in all. */
  turnsWithoutUsageCount: number;
  /** How `cost` was computed; absent from hosts that do not price usage. */
  pricing?: PricingView;
}

/** The session's header and branch list (`session/get`), re-requested when branches or the current branch change. */
export interface SessionView {
  dbPath: string;
  dbName: string;
  sessionId: string;
  readonly: boolean;
  /** Branches in creation order. */
  branches: BranchView[];
  /** Names the session can never use again (for validating a new branch's name). */
  usedBranchIds: string[];
  /** The extension's current branch of the session (the registry owns it; the file records none, spec §8). */
  currentBranchId: string;
  /** Set when the database cannot be read; the view shows it instead of the conversation. */
  problem: string | null;
}

/** A branch and turn for the view to select: the panel was opened for them (`view/ready`, `selection/reveal`). */
export interface RevealView {
  /** null: keep the branch the view shows (or start on the current branch). */
  branchId: string | null;
  /** null: no particular turn. */
  turn: number | null;
}

/** What a span was, as the timeline draws it (src/store/traces/spanRecord.ts' kinds). */
export type TimelineSpanKind = 'agent' | 'model' | 'tool' | 'handoff' | 'guardrail' | 'mcp' | 'other';

/** One span of a turn's timeline; times in milliseconds from the turn's first span. */
export interface TimelineSpanView {
  spanId: string;
  traceId: string;
  /** Null for a trace's root, and for a span whose parent is not in the store (it is drawn as a root). */
  parentSpanId: string | null;
  name: string;
  kind: TimelineSpanKind;
  startMs: number;
  durationMs: number;
  status: 'ok' | 'error' | 'unset';
  error: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  toolName: string | null;
  agentName: string | null;
  /** Where it came from: the extension's run, an agent command, the OTLP receiver, an imported file. */
  source: string;
  /** Its attributes as text (at most `TIMELINE_ATTRIBUTES`, each value cut to `TIMELINE_VALUE_CHARS`). */
  attributes: [string, string][];
  /** Something of it was cut when it was stored (docs/traces.md, "Limits"). */
  truncated: boolean;
}

/** Caps on what one span carries to the view. */
export const TIMELINE_ATTRIBUTES = 64;
export const TIMELINE_VALUE_CHARS = 400;
/** The most spans one timeline shows (a turn with more says how many were left out). */
export const TIMELINE_MAX_SPANS = 2000;

/** A turn's timeline (`turn/timeline`). */
export interface TimelineView {
  /** `ok`: spans below; `none`: no trace is linked to the turn; `off`: traces are not available in this host. */
  state: 'ok' | 'none' | 'off';
  spans: TimelineSpanView[];
  /** Spans beyond `TIMELINE_MAX_SPANS`, not sent. */
  omitted: number;
  traces: number;
  /** From the first span's start to the last one's end. */
  totalMs: number;
  /** Model requests in the turn. */
  requests: number;
}
