/**
 * The geometry of the tokens-per-turn chart above the Tokens table, without the DOM: each usage row of the page shown
 * becomes a stacked bar (uncached input, cached input, visible output, reasoning), in turn order, on a y scale with
 * round ticks. `webview/components/tokenChart.ts` draws it as SVG.
 */
import { formatCost } from '../../../src/shared/pricing';
import type { TurnUsageView } from '../../../src/shared/protocol/conversationViews';
import { t } from '../../shared/l10n';

/** The stacked parts of a bar, bottom to top. OpenAI counts cached tokens in the input and reasoning in the output. */
export const SEGMENT_KEYS = ['input', 'cached', 'output', 'reasoning'] as const;
export type SegmentKey = (typeof SEGMENT_KEYS)[number];

/** Legend text of each part. */
export const SEGMENT_LABELS: Record<SegmentKey, string> = {
  input: t('Input (uncached)'),
  cached: t('Cached input'),
  output: t('Output'),
  reasoning: t('Reasoning'),
};

/**
 * A row's tokens split so the parts add up to input + output, each counted once: the cached tokens out of the input,
 * the reasoning tokens out of the output. Missing counts are 0; more cached (reasoning) than input (output), which a
 * damaged row could claim, is capped.
 */
export function segmentsOf(
  row: Pick<TurnUsageView, 'inputTokens' | 'outputTokens' | 'cachedTokens' | 'reasoningTokens'>,
): Record<SegmentKey, number> {
  const input = Math.max(0, row.inputTokens ?? 0);
  const output = Math.max(0, row.outputTokens ?? 0);
  const cached = Math.min(input, Math.max(0, row.cachedTokens ?? 0));
  const reasoning = Math.min(output, Math.max(0, row.reasoningTokens ?? 0));
  return { input: input - cached, cached, output: output - reasoning, reasoning };
}

/** Round tick values from 0 to at least `max` (1, 2, 2.5 or 5 times a power of ten apart), about `count` steps. */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const ticks: number[] = [];
  for (let v = 0; v < max + step; v += step) {
    ticks.push(Number(v.toPrecision(12)));
    if (v >= max) break;
  }
  return ticks;
}

/** A token count for an axis: 950, 1.2k, 3.4M. */
export function compactCount(n: number): string {
  if (n >= 1_000_000) return `${Number((n / 1_000_000).toPrecision(3))}M`;
  if (n >= 1000) return `${Number((n / 1000).toPrecision(3))}k`;
  return String(n);
}

export interface ChartSegment {
  key: SegmentKey;
  value: number;
  y: number;
  height: number;
}

export interface ChartBar {
  row: TurnUsageView;
  x: number;
  width: number;
  segments: ChartSegment[];
  total: number;
  /** What the bar says on hover and to a screen reader: its counts and its cost. */
  title: string;
  /** The label under the bar, or '' where labels would crowd. */
  label: string;
}

export interface ChartLayout {
  width: number;
  height: number;
  /** The plot area inside the axes. */
  plot: { left: number; top: number; right: number; bottom: number };
  bars: ChartBar[];
  ticks: { value: number; y: number; label: string }[];
  /** The session scope: the run of bars of each branch (bars are grouped by branch), for a label under them. */
  groups: { branchId: string; x1: number; x2: number; label: string }[];
  /** "turns 3–12" (the session scope: "turns 1–40 of 3 branches"), or '' without rows. */
  caption: string;
}

export interface ChartOptions {
  /** The height of the whole chart, axes included. */
  height?: number;
  /** Room per bar: the chart is as wide as its bars need, at least `minWidth`. */
  slot?: number;
  minWidth?: number;
  /** Rows of several branches (the session scope): bars and titles name the branch. */
  session?: boolean;
}

const n = (v: number): string => v.toLocaleString('en-US');

const byBranch = (a: TurnUsageView, b: TurnUsageView): number => (a.branchId < b.branchId ? -1 : a.branchId > b.branchId ? 1 : 0);

/** The rows of the page in turn order (by branch within a turn), whatever order the table shows them in. */
export function inTurnOrder(rows: readonly TurnUsageView[]): TurnUsageView[] {
  return [...rows].sort((a, b) => a.turn - b.turn || byBranch(a, b));
}

/**
 * The whole session's rows: by branch, then turn. Turn numbers repeat across branches, so each branch's bars stand
 * together under its name instead of alternating (1, 1, 2, 2, … with nothing to tell them apart).
 */
export function inBranchOrder(rows: readonly TurnUsageView[]): TurnUsageView[] {
  return [...rows].sort((a, b) => byBranch(a, b) || a.turn - b.turn);
}

/**
 * Room per bar so `count` bars fill `available` pixels (the chart then needs no scrolling), between 4 and 28 px:
 * below 4 the bars would not show, and wider ones say nothing more.
 */
export function slotFor(count: number, available: number): number {
  return Math.max(4, Math.min(28, Math.floor((available - 60) / Math.max(1, count))));
}

function barTitle(row: TurnUsageView, s: Record<SegmentKey, number>, session: boolean): string {
  const turn = session || row.sharedFrom ? t('Turn {0} of {1}', row.turn, row.sharedFrom ?? row.branchId) : t('Turn {0}', row.turn);
  const counts = t(
    '{0} input ({1} cached), {2} output ({3} reasoning)',
    n(s.input + s.cached),
    n(s.cached),
    n(s.output + s.reasoning),
    n(s.reasoning),
  );
  const cost = row.cost === undefined ? '' : `; ${t('cost {0}', formatCost(row.cost))}`;
  return `${turn}: ${counts}${cost}`;
}

/** `text` cut to about `px` pixels of 10 px chart text (6 px a character), with an ellipsis; '' when nothing fits. */
export function fitLabel(text: string, px: number): string {
  const max = Math.floor(px / 6);
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return max < 3 ? '' : chars.slice(0, max - 1).join('') + '…';
}

/** Lays out one bar per row, in turn order, scaled to the largest bar. */
export function layoutChart(rows: readonly TurnUsageView[], options: ChartOptions = {}): ChartLayout {
  const height = options.height ?? 180;
  const slot = options.slot ?? 18;
  const ordered = options.session ? inBranchOrder(rows) : inTurnOrder(rows);
  // The session scope has a row of branch names under the turn numbers.
  const plot = { left: 48, top: 8, right: 0, bottom: height - (options.session ? 50 : 36) };
  const width = Math.max(options.minWidth ?? 320, plot.left + ordered.length * slot + 12);
  plot.right = width - 12;
  const split = ordered.map(segmentsOf);
  const totals = split.map((s) => SEGMENT_KEYS.reduce((a, k) => a + s[k], 0));
  const tickValues = niceTicks(Math.max(0, ...totals));
  const top = tickValues[tickValues.length - 1] ?? 1;
  const scale = (v: number): number => ((plot.bottom - plot.top) * v) / top;
  const barWidth = Math.max(2, Math.round(slot * 0.7));
  // Label every k-th bar so labels never overlap (about 28 px per label).
  const every = Math.max(1, Math.ceil(28 / slot));
  // Counted from the start of each branch's run in the session scope, so every branch's first turn is labelled.
  const runStart: number[] = [];
  ordered.forEach((row, i) => runStart.push(i > 0 && ordered[i - 1]?.branchId === row.branchId ? (runStart[i - 1] as number) : i));
  const bars = ordered.map((row, i): ChartBar => {
    const s = split[i] as Record<SegmentKey, number>;
    let y = plot.bottom;
    const segments: ChartSegment[] = [];
    for (const key of SEGMENT_KEYS) {
      const h = scale(s[key]);
      y -= h;
      if (s[key] > 0) segments.push({ key, value: s[key], y, height: h });
    }
    const x = plot.left + i * slot + (slot - barWidth) / 2;
    const j = i - (runStart[i] as number);
    const last = i === ordered.length - 1 || ordered[i + 1]?.branchId !== row.branchId;
    return {
      row,
      x,
      width: barWidth,
      segments,
      total: totals[i] ?? 0,
      title: barTitle(row, s, !!options.session),
      label: j % every === 0 || (last && j % every >= every / 2) ? String(row.turn) : '',
    };
  });
  const ticks = tickValues.map((value) => ({ value, y: plot.bottom - scale(value), label: compactCount(value) }));
  const groups: ChartLayout['groups'] = [];
  if (options.session)
    bars.forEach((b, i) => {
      const last = groups[groups.length - 1];
      if (last && last.branchId === b.row.branchId) last.x2 = plot.left + (i + 1) * slot;
      else groups.push({ branchId: b.row.branchId, x1: plot.left + i * slot, x2: plot.left + (i + 1) * slot, label: '' });
    });
  for (const g of groups) g.label = fitLabel(g.branchId, g.x2 - g.x1);
  const turns = ordered.map((r) => r.turn);
  const first = turns.length > 0 ? Math.min(...turns) : undefined;
  const lastTurn = turns.length > 0 ? Math.max(...turns) : undefined;
  const branches = new Set(ordered.map((r) => r.branchId)).size;
  const caption =
    first === undefined
      ? ''
      : `${first === lastTurn ? t('turn {0}', first) : t('turns {0}–{1}', first, lastTurn ?? first)}${options.session && branches > 1 ? ` ${t('of {0} branches', branches)}` : ''}`;
  return { width, height, plot, bars, ticks, groups, caption };
}
