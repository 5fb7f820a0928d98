/**
 * The SQL half of a search: a condition on the raw `message_data` that may let through rows that do not match, but
 * never drops one that does, so the exact JS test (`itemMatch.ts`) only decodes the few rows that might.
 *
 * Raw text and decoded text differ in three ways the condition has to respect: JSON escapes `"`, `\` and control
 * characters; Python's `json.dumps` writes every non-ASCII character as `\uXXXX` (the JS SDK writes UTF-8); and
 * Unicode folding can turn a few non-ASCII characters into ASCII ones (`ß` → `ss`, the Kelvin sign → `k`). So an ASCII
 * term is looked for with SQLite's `LIKE` (which folds ASCII case, as the term is already folded), and rows holding
 * an escape or a non-ASCII character are let through as well, for the JS side to check on the raw text before it
 * decodes anything (`rawCouldMatch`); a term with non-ASCII characters, quotes or backslashes lets every row through
 * (the JS test then does all the work).
 */
import type { SqlValue } from '../sqliteDatabase';
import { foldForSearch } from '../conversationText';
import { SDK_TOOL_ERROR_PREFIX } from './itemMatch';
import type { SearchQuery } from './searchQuery';

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

/** Rows whose text may differ from their raw bytes in ways LIKE cannot see: an escape or a non-ASCII character. */
function escapedOrNonAscii(col: string): string {
  return `(instr(${col}, '\\u') > 0 OR length(${col}) <> length(CAST(${col} AS BLOB)))`;
}

/**
 * A LIKE test for `folded`, or null when every row has to go to the JS test. Rows with escapes or non-ASCII
 * characters pass too: one of them may hold a character that folds into the needle (see `FOLDS_INTO_ASCII`), which
 * SQL cannot tell cheaply (a test per such character costs more than the JS side's raw check, `rawCouldMatch`).
 */
function textCondition(col: string, folded: string, params: SqlValue[]): string | null {
  if (!isRawSearchable(folded)) return null;
  params.push(likeEscape(folded));
  return `(${col} LIKE ? ESCAPE '\\' OR ${escapedOrNonAscii(col)})`;
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
    parts.push(
      `(instr(${col}, ?) > 0 OR instr(${col}, 'timed out after') > 0 OR instr(${col}, '"failed"') > 0 ` +
        `OR instr(${col}, '"incomplete"') > 0 OR instr(${col}, '"error"') > 0)`,
    );
    params.push(SDK_TOOL_ERROR_PREFIX);
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
      const c = textCondition(col, t, learnerParams);
      if (c === null) {
        names.length = 0;
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
