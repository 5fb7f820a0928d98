/**
 * What the model saw in a turn (docs/context.md): the input of each model request of the turn, item by item with
 * token counts, the share each kind of item takes, the cached share from the usage row, and the stored items that
 * were outside the window and why. One shape for the conversation view's Context section (`turn/context`), the CLI's
 * `agent-sessions context --json` and the `turn_context` tool, built by src/store/context/turnContext.ts.
 */

/** What an item of the input is, for the shares and the view's colours. */
export type ContextItemKind =
  | 'instructions'
  | 'tool-definitions'
  | 'user'
  | 'assistant'
  | 'system'
  | 'tool-call'
  | 'tool-output'
  | 'reasoning'
  | 'compaction'
  | 'other';

export const CONTEXT_ITEM_KINDS: readonly ContextItemKind[] = [
  'instructions',
  'tool-definitions',
  'user',
  'assistant',
  'system',
  'tool-call',
  'tool-output',
  'reasoning',
  'compaction',
  'other',
];

/**
 * Why a stored item was not in the window: `limit` (older than the items the session handed the model: a session
 * `limit`, or, recorded, an input that started later), `compaction` (before a compaction item the request carried,
 * which stands for them), `not-sent` (recorded: the request did not carry it).
 */
export type OutsideReason = 'limit' | 'compaction' | 'not-sent';

/** One item of a request's input. */
export interface ContextItemView {
  kind: ContextItemKind;
  /** A short title ("User", "get_weather call", "Instructions"). */
  title: string;
  /** The start of its text, one line (at most `CONTEXT_PREVIEW_CHARS`). */
  preview: string;
  tokens: number;
  /** The stored item it is (its sequence number in the branch), null when the store holds no such item (instructions, tools, an item not stored). */
  sequence: number | null;
}

/** One stored item that fell outside the window. */
export interface OutsideItemView {
  kind: ContextItemKind;
  title: string;
  preview: string;
  tokens: number;
  sequence: number;
  reason: OutsideReason;
}

/** The tokens one kind of item takes in a request. */
export interface KindShare {
  kind: ContextItemKind;
  tokens: number;
  items: number;
}

/** One model request of the turn. */
export interface ContextRequestView {
  /** 1-based, in the order the requests were made. */
  index: number;
  /** At most `CONTEXT_MAX_ITEMS`, the newest kept (a longer input says how many older ones `omittedItems` holds). */
  items: ContextItemView[];
  /** Items of the input not listed (counted in `totalTokens` and `shares`). */
  omittedItems: number;
  itemCount: number;
  /** Our count of the input's tokens: the items' text, without the API's framing (docs/context.md). */
  totalTokens: number;
  shares: KindShare[];
  /** Recorded: the model the span names. */
  model: string | null;
  /** Recorded: the request's usage as its span gives it. */
  inputTokens: number | null;
  cachedTokens: number | null;
  /** Recorded: the input was cut when it was recorded (bigger than the bound), or by the trace store's limits. */
  cut: boolean;
}

/** What the view says beside the requests; the view words each code (localized). */
export type ContextNote =
  /** Reconstructed: instructions and tool definitions are not items, so they are not known. */
  | { code: 'no-instructions' }
  /** Reconstructed: the session's `limit` was known and applied. */
  | { code: 'limit'; limit: number }
  /** A compaction item is in the window: the items it replaced are no longer stored. */
  | { code: 'compaction' }
  /** Recorded input was found but could not be read (cut by the trace store's limits, or not JSON). */
  | { code: 'recorded-unreadable'; requests: number }
  /** The history before the turn has more items than are read; the oldest are counted by an estimate. */
  | { code: 'estimated'; items: number }
  /** Items holding an image, a file or audio: only their placeholder is counted (the model's tokens for it are unknown). */
  | { code: 'media-uncounted'; items: number }
  /** The model is not one whose encoding is known: counts use o200k_base. */
  | { code: 'unknown-model'; model: string | null }
  /**
   * The usage row's request count differs from the requests the turn's items show (a request whose output was not
   * stored; a response of reasoning alone, after which the runner asks again).
   */
  | { code: 'requests-differ'; usageRequests: number; shown: number };

/** A turn's context (`turn/context`). */
export interface TurnContextView {
  /** `recorded`: the inputs our runs or a tracer recorded; `reconstructed`: rebuilt from the stored items. */
  source: 'recorded' | 'reconstructed';
  sessionId: string;
  branchId: string;
  /** The branch that ran the turn (a shared turn's ancestor). */
  ranOn: string;
  turn: number;
  requests: ContextRequestView[];
  /** Stored items before the turn (or of the turn) outside every request's window, at most `CONTEXT_MAX_OUTSIDE`, the newest kept. */
  outside: OutsideItemView[];
  outsideCount: number;
  /** The tokenizer's encoding. */
  encoding: 'o200k_base' | 'cl100k_base';
  /** The model the encoding was chosen for (null: none known). */
  model: string | null;
  /** True when the encoding was guessed (an unknown or no model) or some counts are estimates. */
  approximate: boolean;
  /** The turn's usage row: requests, input tokens and the cached share of them. */
  usage: { requests: number | null; inputTokens: number | null; cachedTokens: number | null } | null;
  notes: ContextNote[];
}

/** Caps on what one answer carries (docs/context.md, "Limits"). */
export const CONTEXT_MAX_ITEMS = 400;
export const CONTEXT_MAX_OUTSIDE = 200;
export const CONTEXT_PREVIEW_CHARS = 160;
/** The most model requests of one turn listed (a turn with more lists its last ones, each with its own `index`). */
export const CONTEXT_MAX_REQUESTS = 50;
