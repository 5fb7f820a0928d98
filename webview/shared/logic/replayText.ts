/**
 * What a run did with its tool calls, in the views' language (docs/replay.md): the run summary's sentence in the
 * conversation view and the divergence in both views. Every name and argument in them is untrusted text: it is only
 * put into the sentence, the components draw it as text.
 */
import type { ReplayDivergence, ReplayOutcome, ReplaySummary } from '../../../src/shared/protocol/replay';
import { t } from '../l10n';

/**
 * Whether a run's summary says anything: it re-ran a recorded turn, or called a tool. A plain chat run continuing a
 * branch ("Tools live: no tool calls.") would add the same empty line under every answer. The same runs the replay
 * marks store keeps (`runRecordOf` in src/extension/replay/replayRecords.ts).
 */
export function replaySummaryShown(summary: ReplaySummary): boolean {
  return summary.source !== null || summary.marks.length > 0;
}

/**
 * "3 tool calls replayed, 1 ran live (send_email)": `replaySentence` (src/shared/protocol/replay.ts, which the CLI
 * prints) in the view's language; in English the two say the same, word for word (a unit test holds them together).
 */
export function replaySummaryText(summary: ReplaySummary): string {
  const of = (o: ReplayOutcome) => summary.marks.filter((m) => m.outcome === o);
  const replayed = of('replayed');
  const live = of('live');
  const unmatched = of('unmatched');
  const names = (marks: readonly { name: string }[]) => [...new Set(marks.map((m) => m.name))].join(', ');
  const parts: string[] = [];
  if (summary.mode !== 'live' || summary.marks.length === 0 || replayed.length > 0)
    parts.push(replayed.length === 1 ? t('1 tool call replayed') : t('{0} tool calls replayed', replayed.length));
  if (live.length > 0) parts.push(t('{0} ran live ({1})', live.length, names(live)));
  if (unmatched.length > 0) parts.push(t('{0} unmatched ({1})', unmatched.length, names(unmatched)));
  let text = parts.join(', ');
  if (summary.mode === 'live') text = summary.marks.length === 0 ? t('Tools live: no tool calls') : t('Tools live: {0}', text);
  if (summary.hosted.length > 0) text += `; ${t('not replayable (run by the provider): {0}', [...new Set(summary.hosted)].join(', '))}`;
  if (summary.divergence) text += `; ${divergenceText(summary.divergence)}`;
  if (summary.disagreements.length > 0)
    text += `; ${t("the agent's report disagrees with what it wrote ({0})", summary.disagreements.length)}`;
  return `${text}.`;
}

/** "diverged at step 2: get_weather with other arguments (…)": `divergenceSentence` in the view's language. */
export function divergenceText(d: ReplayDivergence): string {
  if (d.recorded && d.actual && d.recorded.name === d.actual.name)
    return t('diverged at step {0}: {1} with other arguments ({2})', d.step, d.actual.name, d.diff.join('; '));
  if (d.recorded && d.actual) return t('diverged at step {0}: {1} instead of {2}', d.step, d.actual.name, d.recorded.name);
  if (d.recorded) return t('diverged at step {0}: the recording called {1} next, this run stopped calling tools', d.step, d.recorded.name);
  return t("diverged at step {0}: this run called {1} past the recording's calls", d.step, d.actual?.name ?? t('a tool'));
}
