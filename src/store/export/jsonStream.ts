/**
 * Reads a JSON export a line at a time, in the layout `writeJsonExport` writes (the document's fields one per line,
 * then one row per line in each list), checking every row as it goes: a 1 GB export is imported without holding it
 * in memory. A file laid out otherwise (re-indented by an editor, say) raises `NotLineLayout`, and the caller parses it
 * whole instead.
 */
import { boundedLines } from './boundedLines';
import { TransferError } from './exportErrors';
import { formatCount, MAX_EXPORT_LINE_CHARS } from './importLimits';
import type { ExportedMessage, ExportedStructureRow, ExportedUsageRow } from './jsonExport';
import { ExportRowChecks, checkHeader, checkMessage, checkPlainHasNoStructure, type SessionExportHeader } from './jsonParse';

/** The file is valid JSON perhaps, but not in the export's line layout. */
export class NotLineLayout extends Error {}

export type JsonExportEvent =
  | { kind: 'header'; header: SessionExportHeader }
  | { kind: 'message'; row: ExportedMessage }
  | { kind: 'structure'; row: ExportedStructureRow }
  | { kind: 'usage'; row: ExportedUsageRow };

const SECTIONS = ['messages', 'structure', 'usage'] as const;

function parseLine(line: string, n: number): unknown {
  try {
    return JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line);
  } catch {
    throw new NotLineLayout(`line ${n} is not one JSON value`);
  }
}

/**
 * A line past the bound. The layout's first line is `{`, so a long first line is another layout (minified JSON, say),
 * which the caller parses whole when the file is small enough; a long line further on is a row too large to import.
 */
function lineTooLong(line: number): Error {
  if (line === 1) return new NotLineLayout('the first line is not "{"');
  return new TransferError(
    'malformed',
    `Line ${line}: longer than ${formatCount(MAX_EXPORT_LINE_CHARS)} characters, the bound of a line of a JSON export (an item may hold 32 MiB of JSON).`,
    line,
  );
}

/** The export's events in file order: the header, then each message, structure row and usage row, all checked. */
export async function* readJsonExportLines(filePath: string): AsyncGenerator<JsonExportEvent> {
  const lines = boundedLines(filePath, MAX_EXPORT_LINE_CHARS, lineTooLong);
  let n = 0;
  let state: 'start' | 'header' | (typeof SECTIONS)[number] | 'between' | 'end' = 'start';
  let next = 0; // the index in SECTIONS of the list expected next
  const root: Record<string, unknown> = {};
  let header: SessionExportHeader | undefined;
  const counts = { messages: 0, structure: 0, usage: 0 };
  const checks = new ExportRowChecks();
  try {
    for await (const raw of lines) {
      n++;
      const line = n === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      if (state === 'start') {
        if (line.trim() !== '{') throw new NotLineLayout('the first line is not "{"');
        state = 'header';
        continue;
      }
      if (state === 'header' || state === 'between') {
        const section = SECTIONS[next];
        const open = section === undefined ? null : new RegExp(`^"${section}": \\[(\\],?)?$`).exec(line);
        if (open) {
          if (state === 'header') {
            header = checkHeader(root, n);
            yield { kind: 'header', header };
          }
          // The usage rows are checked against the structure, which is whole by then (even when its list was empty).
          if (section === 'usage') checks.structureEnd(header!, counts.messages);
          next++;
          if (open[1]) state = 'between';
          else state = section!;
          continue;
        }
        if (state === 'between') {
          if (next === SECTIONS.length && line === '}') {
            state = 'end';
            continue;
          }
          throw new NotLineLayout(`line ${n} is not where a list starts`);
        }
        const field = parseLine(`{${line.endsWith(',') ? line.slice(0, -1) : line}}`, n);
        if (typeof field !== 'object' || field === null) throw new NotLineLayout(`line ${n} is not a field`);
        Object.assign(root, field);
        continue;
      }
      if (state === 'end') {
        if (line.trim() !== '') throw new NotLineLayout(`line ${n} follows the end of the document`);
        continue;
      }
      // Inside a list: a row per line, or its end.
      if (line === ']' || line === '],') {
        if (state === 'structure') checkPlainHasNoStructure(header!, counts.structure, n);
        state = 'between';
        continue;
      }
      const value = parseLine(line, n);
      if (state === 'messages') yield { kind: 'message', row: checkMessage(value, counts.messages++, n) };
      else if (state === 'structure') yield { kind: 'structure', row: checks.structureRow(value, counts.structure++, counts.messages, n) };
      else yield { kind: 'usage', row: checks.usageRow(value, counts.usage++, n) };
    }
  } finally {
    await lines.return(undefined);
  }
  if (state !== 'end') throw new NotLineLayout('the document ends early');
}
