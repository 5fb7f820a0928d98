/**
 * A file's lines, each at most a given length. `readline` gathers a line whole before handing it over, so one line of
 * a gigabyte would be held in memory (as several copies) before anyone could refuse it; this reader stops as soon as
 * a line passes the bound, having held at most that much of it.
 */
import { createReadStream } from 'node:fs';

/**
 * The lines of `filePath` (UTF-8), split as `readline` splits them (`\n`, `\r\n` or `\r`; no empty last line after a
 * final break). A line longer than `maxChars` throws `tooLong(lineNumber)` (1-based) instead.
 */
export async function* boundedLines(filePath: string, maxChars: number, tooLong: (line: number) => Error): AsyncGenerator<string> {
  const stream = createReadStream(filePath, { encoding: 'utf8' });
  // The current line's pieces from earlier chunks, and their length.
  let parts: string[] = [];
  let length = 0;
  let line = 0;
  // A chunk ended with `\r`: a `\n` starting the next one belongs to the same break.
  let afterCr = false;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = afterCr && chunk.startsWith('\n') ? 1 : 0;
      afterCr = false;
      const breaks = /\r\n|\r|\n/g;
      breaks.lastIndex = start;
      for (let m = breaks.exec(chunk); m !== null; m = breaks.exec(chunk)) {
        if (length + (m.index - start) > maxChars) throw tooLong(line + 1);
        const piece = chunk.slice(start, m.index);
        const text = parts.length > 0 ? parts.join('') + piece : piece;
        parts = [];
        length = 0;
        line++;
        start = m.index + m[0].length;
        if (m[0] === '\r' && start === chunk.length) afterCr = true;
        yield text;
      }
      if (start < chunk.length) {
        length += chunk.length - start;
        if (length > maxChars) throw tooLong(line + 1);
        parts.push(chunk.slice(start));
      }
    }
    if (parts.length > 0) yield parts.join('');
  } finally {
    stream.destroy();
  }
}
