/**
 * Token counts for the Context tab (docs/context.md, "Token counts"): the encoding chosen by the model's family, its
 * rank table and splitting pattern from `gpt-tokenizer` (OpenAI's tiktoken encodings, published as data), counted by
 * our own byte-pair counter (`bpe/`: the package's encoder holds a table in 40 MB of heap, ours in 5 MB outside it;
 * the counts are the package's, tested against it). No native code or WASM, so the same in VS Code's Electron, a
 * remote host and the CLI. The tables are loaded on first use, never at the extension's activation.
 */
import { bytePairCounter, type CountTokens } from './bpe/bytePairCount';
import { packRanks, RankTable, type RankEntry } from './bpe/rankTable';

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** The encoding of a model, and whether that is a guess (an unknown or no model: o200k_base, OpenAI's current one). */
export function encodingFor(model: string | null | undefined): { encoding: EncodingName; approximate: boolean } {
  // "openai/gpt-4o", "azure/gpt-4.1-mini", a fine-tune's "ft:gpt-4o-mini:org::id": the family is the last part's start.
  // The provider prefix goes first: "openai/ft:gpt-3.5-turbo-0125:org::id" holds the fine-tune's "ft:" after it.
  const name = (model ?? '').trim().toLowerCase().replace(/^.*\//, '').replace(/^ft:/, '');
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d|codex)/.test(name)) return { encoding: 'o200k_base', approximate: false };
  if (/^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada)/.test(name)) return { encoding: 'cl100k_base', approximate: false };
  return { encoding: 'o200k_base', approximate: true };
}

/** Counts one text's tokens. */
export type TokenCount = CountTokens;

/**
 * A rank table's module: from source the package's array; in a bundle the same table packed at build time
 * (scripts/tokenizerTables.mjs), so the array of strings is never made.
 */
export type RanksModule = { default: readonly RankEntry[] } | { packed: Uint8Array };
const loaded = new Map<EncodingName, Promise<CountTokens>>();

/** The counter of an encoding over its rank table's module, in either form (the vendor bundles' test uses it too). */
export async function counterOver(encoding: EncodingName, ranks: RanksModule): Promise<CountTokens> {
  const patterns = await import('gpt-tokenizer/encodingParams/constants');
  const packed = 'packed' in ranks ? ranks.packed : packRanks(ranks.default);
  const split = encoding === 'o200k_base' ? patterns.O200K_TOKEN_SPLIT_REGEX : patterns.CL100K_TOKEN_SPLIT_REGEX;
  return bytePairCounter(RankTable.fromPacked(packed), split);
}

async function loadCounter(encoding: EncodingName): Promise<CountTokens> {
  const ranks = (await (encoding === 'o200k_base'
    ? import('gpt-tokenizer/bpeRanks/o200k_base')
    : import('gpt-tokenizer/bpeRanks/cl100k_base'))) as RanksModule;
  return counterOver(encoding, ranks);
}

function load(encoding: EncodingName): Promise<CountTokens> {
  let p = loaded.get(encoding);
  if (!p) {
    p = loadCounter(encoding);
    // A failed load is tried again next time rather than remembered.
    p.catch(() => loaded.delete(encoding));
    loaded.set(encoding, p);
  }
  return p;
}

/** Counts memoized per text: a view redrawn, or the next request of a turn, counts the same items again. */
const MEMO_MAX = 20_000;
const MEMO_TEXT_MAX = 4096;
const memos = new Map<EncodingName, Map<string, number>>();

/** The counter of an encoding, loaded on first use. */
export async function tokenCounter(encoding: EncodingName): Promise<TokenCount> {
  const count = await load(encoding);
  let memo = memos.get(encoding);
  if (!memo) memos.set(encoding, (memo = new Map()));
  const table = memo;
  return (text) => {
    if (text === '') return 0;
    const known = table.get(text);
    if (known !== undefined) return known;
    // Special-token text ("<|endoftext|>") in a message is text to the API, not a control token: the counter takes
    // it as text.
    const n = count(text);
    // Long texts are not kept: they are rare, and keeping them would hold megabytes.
    if (text.length <= MEMO_TEXT_MAX) {
      if (table.size >= MEMO_MAX) table.clear();
      table.set(text, n);
    }
    return n;
  };
}

/** An estimate where counting exactly would cost too long (docs/context.md): about four characters a token. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);
