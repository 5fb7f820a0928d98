/**
 * Stored items the SDKs cannot take as items (`malformed-item`): text that is not JSON by Python's `json.loads`, JSON
 * that is not an object, bytes that are not UTF-8, NULL. Another program or a hand edit wrote them; the view shows
 * them as unreadable, while an agent's `get_items` skips them without a word.
 *
 * SQLite vouches for nearly every row in C, so a sound file costs one pass of its JSON parser and no row is read into
 * JavaScript: text that starts with `{` (valid JSON that does is an object; the SDKs write no leading space) and is
 * RFC 8259 JSON (`json_valid`) with no NUL. SQLite is never laxer than Python there but for a NUL, where its JSON
 * parser stops reading (`{"a":1}` + NUL + anything is valid to it, "Extra data" to Python), hence the `instr`, whose
 * answer also decides such a row (node:sqlite hands over text only up to a NUL). The
 * rows it cannot vouch for (Python's bare `NaN` is one) are decoded as the SDKs decode them, and only those that fail
 * are findings. On the bench's file A (339 MB of item text) the pass takes about 0.8–0.9 s of CPU.
 */
import { pythonJsonLoads, type Decoded } from '../../format/pythonJson';
import { num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

/** Why an entry is not an item the SDKs read (`null`: its bytes are not UTF-8), or null for a JSON object. */
export function entryProblem(decoded: Decoded | null): string | null {
  if (decoded === null) return 'is not UTF-8 text: get_items skips it';
  if (!decoded.ok) return `is not JSON (${decoded.error}): get_items skips it`;
  const v = decoded.value;
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return null;
  const shape = v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`;
  return `is JSON ${shape}, not an item object: get_items hands it to the runner`;
}

/** A NULL `message_data` (a schema without the SDKs' `NOT NULL`): Python's `json.loads(None)` raises `TypeError`. */
const NULL_PROBLEM = "is NULL, no text at all: the inspector skips it, Python's get_items fails on it (TypeError)";

/** A BLOB that is not UTF-8: Python's `json.loads(bytes)` raises `UnicodeDecodeError`, which get_items lets through. */
const BYTES_PROBLEM =
  "is stored as bytes that are not UTF-8 text: the inspector reads them with U+FFFD in place of the bad bytes, and Python's " +
  'get_items fails on them unless they are UTF-16 or UTF-32';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The problem of one stored value as the driver gives it, or null when it is an item. */
function storedProblem(data: unknown): string | null {
  if (data === null || data === undefined) return NULL_PROBLEM;
  if (typeof data === 'string') return entryProblem(pythonJsonLoads(data));
  if (data instanceof Uint8Array) {
    let text: string;
    try {
      text = UTF8.decode(data);
    } catch {
      return BYTES_PROBLEM;
    }
    return entryProblem(pythonJsonLoads(text));
  }
  // A number (an INTEGER or REAL stored where text belongs): Python's json.loads refuses anything but text.
  return `is stored as a ${typeof data}, not text: Python's get_items fails on it (TypeError)`;
}

/**
 * A NUL in stored text: Python reads the whole text and `json.loads` refuses the NUL, while node:sqlite hands
 * JavaScript the text only up to it (so the row's own decoding here could pass): told from SQLite's `instr`.
 */
const NUL_PROBLEM = (at: number): string =>
  `holds a NUL character (U+0000) at character ${at}: Python's json.loads refuses it, so get_items skips it ` +
  '(a reader that stops at the NUL sees other text)';

export function checkMalformedItems(ctx: CheckContext): void {
  const m = ctx.tables.messages;
  const rows = ctx.db
    .prepare(
      `SELECT m.id, m.session_id, m.message_data,
              CASE WHEN typeof(m.message_data) = 'text' THEN instr(m.message_data, char(0)) ELSE 0 END AS nul
       FROM ${m} m
       WHERE ${sessionFilter('m.session_id')}
         AND NOT (typeof(m.message_data) = 'text' AND m.message_data GLOB '{*'
                  AND json_valid(m.message_data) AND instr(m.message_data, char(0)) = 0)
       ORDER BY m.session_id, m.id`,
    )
    .iterate<{ id: unknown; session_id: string; message_data: unknown; nul: unknown }>(...sessionArgs(ctx));
  for (const r of rows) {
    const nul = num(r.nul);
    const problem = nul > 0 ? NUL_PROBLEM(nul) : storedProblem(r.message_data);
    if (problem === null) continue;
    const id = num(r.id);
    ctx.add({
      kind: 'malformed-item',
      session: r.session_id,
      rows: { [ctx.tables.messagesName]: [id] },
      detail: `row ${id} of session ${JSON.stringify(r.session_id)} ${problem}`,
    });
  }
}
