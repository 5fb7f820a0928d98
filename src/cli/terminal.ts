/**
 * Terminal output for the CLI: colours only on a TTY and never with NO_COLOR, long output through a pager, a progress
 * bar on stderr (TTY only), aligned tables.
 */
import { spawn } from 'node:child_process';
import { heapCheck } from './heapSizing';

export interface Terminal {
  color: boolean;
  /** Writes `text` to stdout, through the pager when it is longer than the screen (TTY only, unless disabled). */
  page(text: string): Promise<void>;
  /**
   * Writes what `produce` writes, chunk by chunk as it comes (each write waits for stdout to take it), so a long
   * output is never held whole: for output read by a program or a file. On a TTY with the pager on, the text is
   * gathered and paged as `page` does (the rows that made it are not kept, only the text).
   */
  pageStream(produce: (write: (chunk: string) => Promise<void>) => Promise<void>): Promise<void>;
  progress(label: string): Progress;
}

export interface Progress {
  update(done: number, total: number): void;
  done(): void;
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  cyan: [36, 39],
  magenta: [35, 39],
} as const;
export type Style = keyof typeof CODES;

export function paint(color: boolean, style: Style, text: string): string {
  if (!color || text === '') return text;
  const [on, off] = CODES[style];
  return `\u001b[${on}m${text}\u001b[${off}m`;
}

/** The escape sequences `paint` writes: the only ones the output guard lets through. */
const PAINT_SEQUENCES = new Set(Object.values(CODES).flatMap((pair) => pair.map((code) => `\u001b[${code}m`)));
// eslint-disable-next-line no-control-regex -- what a terminal acts on: C0 but tab and line feed, DEL, C1
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- the same, with paint's sequences and CR LF matched whole to be kept
const CONTROL_OR_KEPT = /\u001b\[\d{1,2}m|\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with every character a terminal would act on written out as `\uXXXX`: a session's text, a branch name, an
 * agent's output or an error quoting them could otherwise set the window's title, write the clipboard (OSC 52), clear
 * the screen or move the cursor over what was printed. Kept: tab, line feed, CR LF, and `paint`'s own colour codes
 * (text can repeat those, which only colours it). In JSON the control characters are escaped already but for DEL and
 * C1, which can only be inside a string, where `\uXXXX` is the same value: JSON output keeps its meaning.
 */
export function neutralizeControls(text: string): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL_OR_KEPT, (m) =>
    m.length > 1 && (m === '\r\n' || PAINT_SEQUENCES.has(m))
      ? m
      : Array.from(m, (c, i) => (i === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join(''),
  );
}

/** The writes the guard wrapped, for the one writer that needs a control character (the progress bar's redraw). */
const unguarded = new WeakMap<NodeJS.WriteStream, NodeJS.WriteStream['write']>();

/**
 * Every string written to stdout and stderr while a command runs goes through `neutralizeControls`: one place at the
 * process's edge, not each of the commands' many writes (and the MCP SDK's), so no path can forget it. Returns what
 * puts the writes back (the CLI's tests run commands in their own process).
 */
export function guardOutput(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): () => void {
  const restore = streams.map((stream) => {
    const write = stream.write;
    unguarded.set(stream, write);
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      return (write as (...args: unknown[]) => boolean).call(this, typeof chunk === 'string' ? neutralizeControls(chunk) : chunk, ...rest);
    } as NodeJS.WriteStream['write'];
    return () => {
      stream.write = write;
      unguarded.delete(stream);
    };
  });
  return () => restore.forEach((r) => r());
}

/** Writes `text` as given, past the guard: only for text made here whole (the progress bar's `\r` and erase). */
function writeUnguarded(stream: NodeJS.WriteStream, text: string): void {
  (unguarded.get(stream) ?? stream.write).call(stream, text);
}

/** Whether to colour stdout: a TTY, no NO_COLOR (any non-empty value, https://no-color.org), no --no-color. */
export function wantsColor(noColorFlag: boolean, stream: NodeJS.WriteStream = process.stdout): boolean {
  return !noColorFlag && stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

export function createTerminal(options: { noColor: boolean; noPager: boolean }): Terminal {
  const color = wantsColor(options.noColor);
  return {
    color,
    page: (text) => page(text, options.noPager),
    pageStream: (produce) => pageStream(produce, options.noPager),
    progress: (label) => progressBar(label),
  };
}

/** Writes `text` to stdout and waits until stdout took it (so a long output written in pieces never piles up). */
export async function writeStdout(text: string): Promise<void> {
  return writeOut(text);
}

async function writeOut(text: string): Promise<void> {
  if (text === '') return;
  heapCheck();
  await new Promise<void>((resolve, reject) => process.stdout.write(text, (err) => (err ? reject(err) : resolve())));
}

async function page(text: string, noPager: boolean): Promise<void> {
  const out = process.stdout;
  const rows = out.rows ?? 24;
  if (noPager || !out.isTTY || !process.stdin.isTTY || text.split('\n').length < rows) return writeOut(text);
  // $PAGER as the user's shell would run it; `less -FRX` quits when the text fits, keeps colours and the screen.
  const command = process.env.PAGER?.trim() || 'less -FRX';
  const ok = await new Promise<boolean>((resolve) => {
    const child = spawn(command, { shell: true, stdio: ['pipe', 'inherit', 'inherit'], env: { LESS: 'FRX', ...process.env } });
    child.on('error', () => resolve(false));
    child.stdin.on('error', () => undefined); // the user quit the pager early
    child.on('close', (code) => resolve(code !== 127));
    // Past the stdout guard: the pager reads its own pipe, and `less -R` passes escape sequences to the terminal.
    child.stdin.end(neutralizeControls(text));
  });
  if (!ok) await writeOut(text);
}

async function pageStream(produce: (write: (chunk: string) => Promise<void>) => Promise<void>, noPager: boolean): Promise<void> {
  if (noPager || !process.stdout.isTTY || !process.stdin.isTTY) return produce(writeOut);
  let text = '';
  await produce(async (chunk) => {
    text += chunk;
  });
  return page(text, noPager);
}

function progressBar(label: string): Progress {
  const err = process.stderr;
  if (!err.isTTY) return { update: () => undefined, done: () => undefined };
  let last = 0;
  let shown = false;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      const width = Math.max(10, Math.min(40, (err.columns ?? 80) - label.length - 30));
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(ratio * width);
      const bar = total > 0 ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(ratio * 100)}%` : '';
      writeUnguarded(err, `\r${neutralizeControls(label)} ${bar} ${done}${total > 0 ? `/${total}` : ''} items\u001b[K`);
    },
    done() {
      if (shown) writeUnguarded(err, '\r\u001b[K');
    },
  };
}

/** A cell's width on screen: code points, ANSI colour codes not counted. */
export function visibleWidth(cell: string): number {
  // eslint-disable-next-line no-control-regex -- strips the colour codes paint() adds
  return Array.from(cell.replace(/\u001b\[[0-9;]*m/g, '')).length;
}

/** Columns padded to their widest cell (ANSI codes not counted); `right` lists right-aligned columns. */
export function table(rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleWidth(cell))));
  return tableLines(rows, widths, right);
}

/** Rows of a table whose column `widths` are known (a table written a page at a time), as `table` lays them out. */
export function tableLines(
  rows: readonly (readonly string[])[],
  widths: readonly number[],
  right: ReadonlySet<number> = new Set(),
): string {
  return rows
    .map((row) =>
      row
        .map((cell, i) => {
          const pad = ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(cell)));
          if (i === row.length - 1 && !right.has(i)) return cell;
          return right.has(i) ? pad + cell : cell + pad;
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Markdown from the transcript renderer, with headings, roles and fences coloured for a terminal. */
export function colorMarkdown(color: boolean, markdown: string): string {
  const colorizer = markdownColorizer(color);
  return colorizer.write(markdown) + colorizer.end();
}

/**
 * `colorMarkdown` a piece at a time, for a transcript written as it is read (`show`): each line is coloured once it is
 * complete (a piece may end inside one), with the open fence carried from line to line; `end()` gives the last line.
 * The pieces' results joined are exactly `colorMarkdown` of the whole text.
 */
export function markdownColorizer(color: boolean): { write(piece: string): string; end(): string } {
  let fence: string | null = null;
  let partial = '';
  // Messages and reasoning are both blockquotes (markdown.ts): only a quote begun by `**Reasoning` is painted as one.
  let reasoning = false;
  const line = (text: string): string => {
    if (text.startsWith('>')) {
      if (text.startsWith('> **Reasoning')) reasoning = true;
      return reasoning ? paint(true, 'magenta', text) : text;
    }
    reasoning = false;
    const open = /^(`{3,})/.exec(text);
    if (fence !== null) {
      if (text === fence) fence = null;
      return paint(true, 'dim', text);
    }
    if (open) {
      fence = open[1]!;
      return paint(true, 'dim', text);
    }
    if (/^#{1,6} /.test(text)) return paint(true, 'cyan', paint(true, 'bold', text));
    const role = /^\*\*(User|Assistant|System|Developer|Tool call|Tool output|Unreadable item)\*\*(.*)$/.exec(text);
    if (role) {
      const style: Style =
        role[1] === 'User' ? 'green' : role[1] === 'Assistant' ? 'blue' : role[1] === 'Unreadable item' ? 'red' : 'yellow';
      return paint(true, style, paint(true, 'bold', role[1]!)) + role[2];
    }
    if (/^_.*_$/.test(text)) return paint(true, 'dim', text);
    return text;
  };
  return {
    write(piece) {
      if (!color) return piece;
      const lines = (partial + piece).split('\n');
      partial = lines.pop()!;
      return lines.map((l) => `${line(l)}\n`).join('');
    },
    end() {
      const last = partial;
      partial = '';
      return color ? line(last) : '';
    },
  };
}
