/**
 * The SQL prefilter as it was before messages got verdicts (see searchOracle.ts), verbatim but for the imports and one
 * later fix both take: a dotted tool name's parts (`toolNameCondition`; before it, `tool:crm.lookup` found no MCP call).
 */
import type { SqlValue } from '../../src/store/sqlite/sqliteDatabase';
import { foldForSearch } from '../../src/store/format/conversationText';
import { FOLDS_INTO_ASCII, SDK_TOOL_ERROR_PREFIX } from '../../src/store/search/itemMatch';
import type { SearchQuery } from '../../src/store/search/searchQuery';

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
function foldsIntoNeedle(col: string, folded: string, params: SqlValue[]): string | null {
  const chars = foldingInto(folded);
  if (chars.length === 0) return null;
  const escapes = chars.map(() => `${col} LIKE ? ESCAPE '\\'`).join(' OR ');
  const literal = chars.map(() => `instr(${col}, ?) > 0`).join(' OR ');
  params.push(...chars.map((c) => likeEscape('\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))), ...chars);
  const nonAscii = `length(${col}) <> length(CAST(${col} AS BLOB))`;
  // LIKE (no escape character: the backslash is literal) finds the escapes' `\u` several times faster than instr.
  return `(${col} LIKE '%\\u%' AND (${escapes})) OR (${nonAscii} AND (${literal}))`;
}

/**
 * A LIKE test for `folded`, or null when every row has to go to the JS test. Rows holding a character that folds
 * into part of the needle (see `FOLDS_INTO_ASCII`) pass too, for the JS side to decide (`rawCouldMatch`, then the
 * exact test).
 */
function textCondition(col: string, folded: string, params: SqlValue[]): string | null {
  if (!isRawSearchable(folded)) return null;
  params.push(likeEscape(folded));
  const folds = foldsIntoNeedle(col, folded, params);
  return folds === null ? `${col} LIKE ? ESCAPE '\\'` : `(${col} LIKE ? ESCAPE '\\' OR ${folds})`;
}

/**
 * A condition on a structure row's `message_type` (`col`) that rejects rows the query cannot match before their
 * `message_data` is read at all, or null. `is:failed` never matches a message (only tool items fail), and a message's
 * type is `user`, `assistant` or `message` (spec §6); `role:user` and `role:assistant` match only their own type. On
 * the benchmark's files most bytes are messages, so this skips most of the reading an `is:failed` scan did.
 */
export function structureTypeCondition(query: SearchQuery, col: string): string | null {
  const parts: string[] = [];
  if (query.failed) parts.push(`${col} NOT IN ('user', 'assistant', 'message')`);
  if (query.roles.length > 0 && query.roles.every((r) => r === 'user' || r === 'assistant'))
    parts.push(`${col} IN (${query.roles.map((r) => `'${r}'`).join(', ')})`);
  return parts.length > 0 ? parts.join(' AND ') : null;
}

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
 */
export function sqlPrefilter(query: SearchQuery, col: string): Prefilter {
  const params: SqlValue[] = [];
  const parts: string[] = [];
  if (query.text !== '') {
    const c = textCondition(col, foldForSearch(query.text), params);
    if (c !== null) parts.push(c);
  }
  if (query.failed) {
    // LIKE, not instr: SQLite's LIKE scans several times faster, and folding ASCII case only lets more rows through.
    const markers = [SDK_TOOL_ERROR_PREFIX, 'timed out after', '"failed"', '"incomplete"', '"error"'];
    parts.push(`(${markers.map(() => `${col} LIKE ? ESCAPE '\\'`).join(' OR ')})`);
    params.push(...markers.map(likeEscape));
  }
  if (query.roles.length > 0) {
    // The role's value as a JSON string; Python writes `"role": "user"`, JS `"role":"user"`.
    parts.push(`(${query.roles.map(() => `instr(${col}, ?) > 0`).join(' OR ')})`);
    params.push(...query.roles.map((r) => `"${r}"`));
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
    // An item of the tool is its call (named) or an output (named by its call, or by itself in the JS shape).
    parts.push(`(${learner ?? '1'} OR instr(${col}, 'call_output"') > 0 OR instr(${col}, 'call_result"') > 0)`);
    params.push(...learnerParams);
  }
  const main = parts.length > 0 ? parts.join(' AND ') : '1';
  if (learner === null || main === '1') return { sql: main, params };
  return { sql: `((${main}) OR ${learner})`, params: [...params, ...learnerParams] };
}
