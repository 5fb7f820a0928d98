/**
 * Reading TEXT values that hold U+0000. SQLite stores them whole (Python and better-sqlite3 write them), but
 * `node:sqlite` returns TEXT cut at the first U+0000, so `'a\u0000b'` would read as `'a'`: two ids would merge and an
 * id could not be passed back to find its rows. Queries whose results are ids select them through `exactTextSql`, which
 * hands such values over as bytes (a BLOB); `textFromSql` decodes them. Other values stay TEXT, so the common case costs
 * one `instr` per row.
 */

/** SQL for `column` that returns a value holding U+0000 as a BLOB of its UTF-8 bytes, any other value as it is. */
export function exactTextSql(column: string): string {
  return `CASE WHEN instr(${column}, char(0)) > 0 THEN CAST(${column} AS BLOB) ELSE ${column} END`;
}

/** The text of a value selected through `exactTextSql` (bytes are UTF-8). */
export function textFromSql(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  return String(value);
}
