/**
 * The SQL half of a search: a condition on the raw `message_data` that may let through rows that do not match, but
 * never drops one that does, so the exact JS test (`itemMatch.ts`) only decodes the few rows that might.
 *
 * Raw text and decoded text differ in three ways the condition has to respect: JSON escapes `"`, `\` and control
 * characters; Python's `json.dumps` writes every non-ASCII character as `\uXXXX` (the JS SDK writes UTF-8); and
 * Unicode folding can turn a few non-ASCII characters into ASCII ones (`ß` → `ss`, the Kelvin sign → `k`). So an ASCII
 * term is looked for with SQLite's `LIKE` (which folds ASCII case, as the term is already folded), and rows holding
 * one of the few characters that fold into the term's letters, escaped or not, are let through as well, for the JS
 * side to check on the raw text before it decodes anything (`rawCouldMatch`); a term with non-ASCII characters,
 * quotes or backslashes lets every row through (the JS test then does all the work).
 */
import type { SqlValue } from '../sqlite/sqliteDatabase';
import { foldForSearch } from '../format/conversationText';
import { FOLDS_INTO_ASCII, SDK_TOOL_ERROR_PREFIX } from './itemMatch';
import { reviewOnly, type SearchQuery } from './searchQuery';

export interface Prefilter {
  /** A boolean SQL expression over the column given to `sqlPrefilter`, or '1' when every row must be decoded. */
  sql: string;
  params: SqlValue[];
}

const likeEscape = (s: string): string => '%' + s.replace(/[\\%_]/g, (c) => '\\' + c) + '%';

/** An ASCII term the raw-text shortcut holds for (printable, none of the characters JSON escapes). */
export function isRawSearchable(folded: string): boolean {
  return folded !== '' && /^[\x20-\x7e]*$/.test(folded) && !/["\\]/.test(folded);
}

/**
 * The characters of `FOLDS_INTO_ASCII` whose folding holds a character of `folded`: only they can turn a row the
 * needle's LIKE misses into a match (a match is made of the needle's characters, and a non-ASCII character adds
 * one only through its folding). `turn 225000: ` has four (ŉ ẗ ﬅ ﬆ), most words a handful, `:` none.
 */
function foldingInto(folded: string): string[] {
  return [...FOLDS_INTO_ASCII].filter((c) => [...foldForSearch(c)].some((f) => f <= '\x7f' && folded.includes(f)));
}

/**
 * Rows whose text may hold a character that folds into part of `folded` where LIKE cannot see it: escaped
 * (`\u017f`, Python; LIKE ignores the hex digits' case) or as itself (UTF-8, the JS SDK). Each test runs only on the
 * rows that hold an escape, or a non-ASCII character, at all — a quarter of the scale file's rows hold `\u2014` — so
 * such rows cost SQLite a few more passes instead of going to JavaScript.
 */
function foldsIntoNeedle(col: string, chars: readonly string[], params: SqlValue[]): string {
  const escapes = chars.map(() => `${col} LIKE ? ESCAPE '\\'`).join(' OR ');
  const literal = chars.map(() => `instr(${col}, ?) > 0`).join(' OR ');
  params.push(...chars.map((c) => likeEscape('\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))), ...chars);
  const nonAscii = `length(${col}) <> length(CAST(${col} AS BLOB))`;
  // LIKE (no escape character: the backslash is literal) finds the escapes' `\u` several times faster than instr.
  return `(${col} LIKE '%\\u%' AND (${escapes})) OR (${nonAscii} AND (${literal}))`;
}

/** The ASCII characters some character of `FOLDS_INTO_ASCII` folds into (`ss`, `i`, `k`, `st`, …). */
const PRODUCED_BY_FOLDING: ReadonlySet<string> = new Set(
  [...FOLDS_INTO_ASCII].flatMap((c) => [...foldForSearch(c)].filter((f) => f <= '\x7f')),
);

/**
 * A LIKE pattern every row matching `folded` holds, even through folding: the needle's runs of characters that no
 * non-ASCII character folds into (`b`, `e`, `r`, digits, spaces, …), in order. Such a character of the folded text can
 * only be itself (either case) in the raw JSON: printable ASCII is never escaped, and only the characters of
 * `FOLDS_INTO_ASCII` fold into ASCII. So a row without `%z%z%b%r%` cannot match `zanzibar`, whatever characters it
 * holds, and the costlier tests for folding characters skip it. Null when every character may come from folding.
 */
export function literalSkeleton(folded: string): string | null {
  const runs = splitRuns(folded);
  if (runs.length === 0) return null;
  return '%' + runs.map((r) => r.replace(/[\\%_]/g, (c) => '\\' + c)).join('%') + '%';
}

function splitRuns(folded: string): string[] {
  const runs: string[] = [];
  let run = '';
  for (const c of folded) {
    if (PRODUCED_BY_FOLDING.has(c)) {
      if (run !== '') runs.push(run);
      run = '';
    } else run += c;
  }
  if (run !== '') runs.push(run);
  return runs;
}

/**
 * A LIKE test for `folded`, or null when every row has to go to the JS test. Rows holding a character that folds
 * into part of the needle (see `FOLDS_INTO_ASCII`) pass too, for the JS side to decide (`rawCouldMatch`, then the
 * exact test).
 */
function textCondition(col: string, folded: string, params: SqlValue[]): string | null {
  if (!isRawSearchable(folded)) return null;
  const chars = foldingInto(folded);
  if (chars.length === 0) {
    params.push(likeEscape(folded));
    return `${col} LIKE ? ESCAPE '\\'`;
  }
  const skeleton = literalSkeleton(folded);
  if (skeleton === null) {
    params.push(likeEscape(folded));
    return `(${col} LIKE ? ESCAPE '\\' OR ${foldsIntoNeedle(col, chars, params)})`;
  }
  // The skeleton first, and then the needle or the folding characters: every row holding the needle holds its
  // skeleton, so this lets through the same rows as "the needle, or the skeleton and a folding character", but a row
  // without the skeleton (most rows, for a rare term) costs one pass instead of two (the needle's, then the
  // skeleton's): 2 passes → 1 on file A's whole scan. A row that holds the needle costs one pass more, beside the
  // decoding and snippet it goes on to cost.
  params.push(skeleton, likeEscape(folded));
  return `(${col} LIKE ? ESCAPE '\\' AND (${col} LIKE ? ESCAPE '\\' OR ${foldsIntoNeedle(col, chars, params)}))`;
}

/**
 * A condition on a structure row's `message_type` (`col`) that rejects rows the query cannot match before their
 * `message_data` is read at all, or null. `is:failed` never matches a message (only tool items fail), and a message's
 * type is `user`, `assistant` or `message` (spec §6); `role:user` and `role:assistant` match only their own type. On
 * the benchmark's files most bytes are messages, so this skips most of the reading an `is:failed` scan did.
 */
export function structureTypeCondition(query: SearchQuery, col: string): string | null {
  const parts: string[] = [];
  // Comparisons, not NOT IN / IN: SQLite runs those through a lookup per row, which doubled the cost of a scan of
  // the structure rows (70 → 200 ms on the bench's file A; the comparisons cost 60).
  if (query.failed) parts.push(`${col} <> 'user' AND ${col} <> 'assistant' AND ${col} <> 'message'`);
  if (rolesDecidedByType(query)) parts.push(`(${query.roles.map((r) => `${col} = '${r}'`).join(' OR ')})`);
  // Review filters alone find each turn's user message (`reviewOnly`).
  if (reviewOnly(query)) parts.push(`${col} = 'user'`);
  return parts.length > 0 ? parts.join(' AND ') : null;
}

/**
 * The structure row's condition for a query with `tool:` filters: no user or assistant message (their role leaves them
 * no tool name, and the calls a tool filter learns from are not messages), and for `is:failed` no message at all.
 * The role filters are left to the text: a tool filter needs its calls, whatever the role asked.
 */
export function toolTypeCondition(query: SearchQuery, col: string): string {
  return query.failed ? `${col} <> 'user' AND ${col} <> 'assistant' AND ${col} <> 'message'` : `${col} <> 'user' AND ${col} <> 'assistant'`;
}

/** Whether the query's roles are all ones a structure row's `message_type` names (`user`, `assistant`). */
export function rolesDecidedByType(query: SearchQuery): boolean {
  return query.roles.length > 0 && query.roles.every((r) => r === 'user' || r === 'assistant');
}

/**
 * What a failed tool call's row holds (see `failedReason`, which compares all of it exactly, case included), as GLOB
 * patterns: GLOB is case-sensitive, and SQLite finds a pattern's first character with `strcspn`, so each test costs
 * about one fast pass when that character is rare in the text — `w`, `m` and `"` are, the `A` of the SDK's error
 * text and the `t` of "timed out" are not (LIKE on the whole error text took ~4× as long). The SDK's error text (its
 * tail), the JS SDK's timeout text, and the JSON strings `"failed"`, `"incomplete"` (a status) and `"error"` (an
 * MCP call's key) in one class pattern that lets a few other strings through (`"fact…`) for the exact test to refuse.
 */
export const FAILED_MARKERS: readonly string[] = [
  `*${SDK_TOOL_ERROR_PREFIX.slice(SDK_TOOL_ERROR_PREFIX.indexOf('while'))}*`,
  '*med out after*',
  '*"[efi][anr][cir][lor]*',
];

/**
 * Rows that may hold the tool name `folded`, or null (every row may). A dotted name is how `toolNameOf` joins an MCP
 * server's label and its tool (`crm.lookup`) or a namespace and its function, which the row holds apart
 * (`"server_label": "crm", "name": "lookup"`): such a row holds each dot-separated part, so that is what is looked for
 * (testing the whole name let no MCP call through, and `tool:crm.lookup` found none).
 */
function toolNameCondition(col: string, folded: string, params: SqlValue[]): string | null {
  if (!folded.includes('.')) return textCondition(col, folded, params);
  // A raw-searchable name's parts are raw-searchable too (substrings of it); an empty part holds anywhere.
  const parts = folded.split('.').filter((p) => p !== '');
  if (parts.length === 0 || !isRawSearchable(folded)) return textCondition(col, folded, params);
  return `(${parts.map((p) => textCondition(col, p, params)).join(' AND ')})`;
}

/**
 * The prefilter of `query` over `col`, and the "learner" condition: rows that may be calls of the queried tools, which
 * must reach the JS side even when they fail the rest of the query, so outputs (which carry no name in the Responses
 * shape) can be named by their call.
 *
 * A BLOB `message_data` (another writer's bytes, which the store decodes as UTF-8 text) is tested as that text, through
 * `CAST(col AS TEXT)`: better-sqlite3's SQLite is built with SQLITE_LIKE_DOESNT_MATCH_BLOBS, so its LIKE and GLOB never
 * match a BLOB, and a search missed rows that node:sqlite (whose LIKE reads a BLOB's bytes) found. The cast retypes a
 * BLOB without copying it and leaves TEXT as it is: a rare word's scan of the bench's file A took the same time with
 * it, where `LIKE … OR (typeof(col) = 'blob' AND …)` cost a tenth more (a `typeof()` of every row the LIKE refused).
 */
export function sqlPrefilter(query: SearchQuery, column: string, options: { rolesByType?: boolean; typeCol?: string } = {}): Prefilter {
  const col = `CAST(${column} AS TEXT)`;
  const params: SqlValue[] = [];
  const parts: string[] = [];
  if (query.text !== '') {
    const c = textCondition(col, foldForSearch(query.text), params);
    if (c !== null) parts.push(c);
  }
  if (query.failed) {
    parts.push(`(${FAILED_MARKERS.map(() => `${col} GLOB ?`).join(' OR ')})`);
    params.push(...FAILED_MARKERS);
  }
  // Review filters alone find user messages (`reviewOnly`).
  const roles = reviewOnly(query) ? ['user'] : query.roles;
  // `rolesByType`: the caller tests the structure row's type (`structureTypeCondition`), which says the role already.
  if (roles.length > 0 && !options.rolesByType) {
    // The role's value as a JSON string; Python writes `"role": "user"`, JS `"role":"user"`. Roles are compared exactly.
    parts.push(`(${roles.map(() => `${col} GLOB ?`).join(' OR ')})`);
    params.push(...roles.map((r) => `*"${r}"*`));
  }
  let learner: string | null = null;
  const learnerParams: SqlValue[] = [];
  if (query.tools.length > 0) {
    const names: string[] = [];
    for (const t of query.tools) {
      const c = toolNameCondition(col, t, learnerParams);
      if (c === null) {
        // Every row goes through: the parameters of the names before this one go too.
        names.length = 0;
        learnerParams.length = 0;
        break;
      }
      names.push(c);
    }
    learner = names.length > 0 ? `(${names.join(' OR ')})` : null;
    // An item of the tool is its call (named) or an output (named by its call, or by itself in the JS shape). With the
    // structure row's type (`typeCol`), an output is let through on its type first: the GLOBs, which still let through
    // any other row holding those words, then read only the rows that are not outputs (an output is the longest row).
    const outputType = options.typeCol ? `${options.typeCol} GLOB '*call_output' OR ${options.typeCol} GLOB '*call_result' OR ` : '';
    parts.push(`(${outputType}${learner ?? '1'} OR ${col} GLOB '*call_output"*' OR ${col} GLOB '*call_result"*')`);
    params.push(...learnerParams);
  }
  const main = parts.length > 0 ? parts.join(' AND ') : '1';
  // A query of tools alone: its condition holds the learner already, and testing it again read each other row twice.
  if (learner === null || main === '1' || parts.length === 1) return { sql: main, params };
  return { sql: `((${main}) OR ${learner})`, params: [...params, ...learnerParams] };
}
