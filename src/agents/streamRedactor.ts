/**
 * Redaction of text that arrives in pieces (an agent's text deltas, its stderr, its stdout lines that are not events):
 * the one owner of it. Redacting each piece alone lets a secret through when it is split across two pieces, so a
 * stream's redactor holds back the end of what it was given for as long as that end could be the start of a secret,
 * and lets it out, redacted, once the next piece (or the stream's end) settles it. A secret also matches with one line
 * break between two of its characters: an agent that prints a key across two lines must not show it in halves.
 */
import { REDACTED, redactSecrets, redactableSecrets } from './apiKey';

/** Every proper start of `word` as a pattern (`bearer`: b, be, bea, …, beare), for a word still arriving. */
const startsOf = (word: string): string => `(?:${Array.from({ length: word.length - 1 }, (_, i) => word.slice(0, i + 1)).join('|')})`;

/**
 * The end of a text that may be the start of a credential shaped like one `redactSecrets` recognises without knowing
 * it (`sk-…`, `Bearer …`, `Authorization: …`): held back until a character that cannot continue it arrives. Every
 * start of those words counts (`B` then `earer …` once showed a bearer token), and an `Authorization` header's value
 * up to where its rule stops.
 */
const TRAILING_TOKEN = new RegExp(
  [
    '\\bsk-[A-Za-z0-9_*-]*',
    `\\b${startsOf('sk-')}`,
    '\\bbearer(?:\\s+[A-Za-z0-9._~+/=-]*)?',
    `\\b${startsOf('bearer')}`,
    `\\bauthorization["']?\\s*(?:[:=]\\s*["']?(?:bearer\\s+)?[^\\s"',}]*)?`,
    `\\b${startsOf('authorization')}`,
  ]
    .map((p) => `(?:${p})$`)
    .join('|'),
  'i',
);
/**
 * The longest such token held back: a longer one is let out redacted as it stands (the rest of an unknown key, if
 * it goes on, would show; a known secret never does, since it is matched in full).
 */
const MAX_TOKEN_HOLD = 4096;

/** A stream's redactor: `push` each piece and show what it returns; `end` returns the rest. */
export class StreamRedactor {
  private readonly secrets: string[];
  private readonly patterns: RegExp[];
  private pending = '';

  constructor(secrets: readonly (string | undefined)[]) {
    // A secret's URL-encoded form too (`redactSecrets` redacts both): held back as it arrives, like the secret.
    const known = redactableSecrets(secrets);
    this.secrets = [...new Set(known.flatMap((s) => [s, encodeURIComponent(s)]))];
    this.patterns = this.secrets.map((s) => new RegExp([...s].map(escapeRegExp).join('(?:\\r?\\n)?'), 'g'));
  }

  /** The text of `piece` (and of what was held back before it) that can be shown now, redacted. */
  push(piece: string): string {
    const text = this.pending + piece;
    let hold = text.length;
    // Only the end can hold a token still growing: searching the whole text would retry the pattern at every
    // `sk-` of a long delta, quadratic in its length.
    const from = Math.max(0, text.length - MAX_TOKEN_HOLD - 1);
    const token = TRAILING_TOKEN.exec(text.slice(from));
    if (token && text.length - (from + token.index) <= MAX_TOKEN_HOLD) hold = from + token.index;
    // Found on the text as it came, before any rule rewrote part of it: a pattern that took the first half of a key
    // split across two lines would otherwise leave the second half to be shown.
    hold = Math.min(hold, this.partialStart(text));
    hold = this.outsideWhole(text, hold);
    this.pending = text.slice(hold);
    return this.redact(text.slice(0, hold));
  }

  /** The rest, redacted: the stream ended, so what was held back cannot be continued any more. */
  end(): string {
    const rest = this.redact(this.pending);
    this.pending = '';
    return rest;
  }

  /** Redacts a whole text: every secret (a line break inside it too), then `redactSecrets`'s rules. */
  redact(text: string): string {
    let out = text;
    // A line break the secret swallowed is kept after the marker, so a line-by-line reader keeps its lines.
    for (const p of this.patterns) out = out.replace(p, (m) => (m.includes('\n') ? `${REDACTED}\n` : REDACTED));
    return redactSecrets(out, this.secrets);
  }

  /** Where every secret stands whole in `text`, as [start, end) ranges. */
  private wholes(text: string): [number, number][] {
    return this.patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m): [number, number] => [m.index, m.index + m[0].length]));
  }

  /**
   * `hold` moved back to the start of any whole secret it would cut: with two secrets, the start of one may sit inside
   * the other (`aaaaaaaab` and a secret starting with `a`), and the part before the cut would be shown unredacted.
   */
  private outsideWhole(text: string, hold: number): number {
    if (hold >= text.length) return hold;
    const wholes = this.wholes(text);
    for (let moved = true; moved;) {
      moved = false;
      for (const [a, b] of wholes)
        if (a < hold && hold < b) {
          hold = a;
          moved = true;
        }
    }
    return hold;
  }

  /** Where the earliest end of `text` starts that could still grow into a secret (else its length). */
  private partialStart(text: string): number {
    let start = text.length;
    // Whole secrets (any of them) are redacted where they stand: a start inside one is not a start.
    const whole = this.wholes(text);
    this.patterns.forEach((_pattern, k) => {
      const secret = this.secrets[k]!;
      // A partial secret is shorter than the secret, plus a line break between any two of its characters.
      for (let i = Math.max(0, text.length - 3 * secret.length); i < start; i++) {
        if (text[i] !== secret[0] || whole.some(([a, b]) => i >= a && i < b)) continue;
        if (couldStart(text.slice(i), secret)) {
          start = i;
          break;
        }
      }
    });
    return start;
  }
}

/**
 * A stream read as lines (stderr, stdout lines that are not events): lines in, redacted lines out, joined as one text
 * so a secret split across two lines is still found.
 */
export class LineRedactor {
  private readonly stream: StreamRedactor;
  private partial = '';

  constructor(secrets: readonly (string | undefined)[]) {
    this.stream = new StreamRedactor(secrets);
  }

  /** The lines that can be shown now (none, while the end of `line` could start a secret). */
  push(line: string): string[] {
    return this.lines(this.stream.push(`${line}\n`));
  }

  /** The lines held back, redacted. */
  end(): string[] {
    const out = this.lines(this.stream.end());
    if (this.partial !== '') out.push(this.partial);
    this.partial = '';
    return out;
  }

  private lines(text: string): string[] {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    return parts;
  }
}

/** Whether `text` (starting with the secret's first character) is a proper start of `secret`, line breaks allowed. */
function couldStart(text: string, secret: string): boolean {
  let j = 0;
  let i = 0;
  while (i < text.length) {
    if (j > 0 && (text[i] === '\n' || text[i] === '\r')) {
      // One line break (\n or \r\n) between two of the secret's characters.
      if (text[i] === '\r') {
        i++;
        if (i === text.length) return true;
        if (text[i] !== '\n') return false;
      }
      i++;
      if (i === text.length) return true;
    }
    if (text[i] !== secret[j]) return false;
    i++;
    j++;
    // The whole secret is not a start of it: it was redacted already (or, with a line break it cannot take, is not it).
    if (j === secret.length) return false;
  }
  return true;
}

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
