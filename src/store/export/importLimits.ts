/**
 * The bounds on what an import reads (README, "Export and import"): an item, any other string of an export, a line
 * of the file and how deep JSON may nest. Each one refused is a `malformed` TransferError naming the bound, and nothing
 * is written; without them a 100 MB string took 1.5 GB to import and deeply nested JSON overflowed the stack.
 */

/**
 * Characters of one item's JSON: a JSONL line, a JSON export's `message_data`. An item carrying an image or a file
 * as base64 is the largest thing a real session holds: the Responses API takes images up to 20 MB (about 27 MB as
 * base64), so 32 MiB keeps such an item and its text. Importing a 27 MB item took about 610 MB of memory (JSONL, Node
 * 20); a 100 MB one, now refused, took 1.5 GB.
 */
export const MAX_IMPORT_ITEM_CHARS = 32 * 1024 * 1024;

/**
 * Characters of any other string of a JSON export: a session or branch id, a time, a message type, a tool name, a
 * usage row's token details. Ours are a few hundred characters at most; 1 MiB leaves room for anyone's ids.
 */
export const MAX_IMPORT_FIELD_CHARS = 1024 * 1024;

/**
 * Characters of one line of a JSON export in its line layout (`jsonStream.ts`): a message row holds its item as a
 * JSON string, where escaping at most doubles the item's text, beside a few short fields.
 */
export const MAX_EXPORT_LINE_CHARS = 2 * MAX_IMPORT_ITEM_CHARS + MAX_IMPORT_FIELD_CHARS;

/**
 * How deep arrays and objects may nest in an imported item (and in a JSON export as a whole). Items nest a dozen
 * levels or so (a tool output's JSON inside a message's content); Python's `json` gives up near 1,000 (its recursion
 * limit), and the code that turns an item into rows recurses, so a deeper item is refused before anything parses it.
 */
export const MAX_IMPORT_JSON_DEPTH = 512;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether the JSON text `json` nests arrays and objects more than `max` levels deep. A loop over the characters (the
 * brackets inside strings skipped), never recursion, so any depth is measured without touching the stack; it runs
 * before `JSON.parse` and anything that walks the value. Text that is not valid JSON is measured the same way.
 */
export function nestsDeeperThan(json: string, max: number): boolean {
  // Fewer characters than levels cannot nest that deep: most items are skipped without a scan.
  if (json.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** `n` with thousands separators, for the messages (`33,554,432`). */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
