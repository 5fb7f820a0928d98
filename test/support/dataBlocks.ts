/**
 * Reading the data blocks of a prompt or a tool answer (src/store/query/dataBlock.ts) as a model would: a block opens
 * at a line `<session-data-TAG>` and ends at the first line `</session-data-TAG>` with the same tag, whatever lies
 * between. Written from the format, not from the code under test, so a block the content could end early shows.
 */
import { strict as assert } from 'node:assert';

/** One block: its tag, and where its content starts and ends in the text. */
export interface FoundBlock {
  tag: string;
  start: number;
  end: number;
}

/** The data blocks of `text`, in order. */
export function dataBlocks(text: string): FoundBlock[] {
  const blocks: FoundBlock[] = [];
  const open = /^<(session-data-[0-9a-f]{16})>$/gm;
  for (let m = open.exec(text); m; m = open.exec(text)) {
    const start = m.index + m[0].length;
    const close = new RegExp(`^</${m[1]}>$`, 'm').exec(text.slice(start));
    assert.ok(close, `block ${m[1]} is closed`);
    blocks.push({ tag: m[1]!, start, end: start + close.index });
    open.lastIndex = start + close.index + close[0].length;
  }
  return blocks;
}

/** Asserts that `needle` occurs in `text`, and only inside its data blocks. */
export function assertOnlyInData(text: string, needle: string): void {
  const blocks = dataBlocks(text);
  let at = text.indexOf(needle);
  assert.ok(at >= 0, `${JSON.stringify(needle.slice(0, 40))} is in the text`);
  for (; at >= 0; at = text.indexOf(needle, at + 1)) {
    const inside = blocks.some((b) => at >= b.start && at + needle.length <= b.end);
    assert.ok(inside, `${JSON.stringify(needle.slice(0, 40))} at ${at} is outside every data block:\n${text}`);
  }
}
