/**
 * A trace as the *link a trace* pick shows it. Its words come from whoever sent the spans (a span's name, a service's
 * name), and VS Code draws `$(name)` in a quick pick item as an icon: they go through `plainIconText`. Without VS Code,
 * so it is unit-tested; localized with @vscode/l10n (the host loads its bundle).
 */
import * as l10n from '@vscode/l10n';
import { plainIconText } from '../core/iconText';
import type { StoredSpan, UnlinkedTrace } from '../../store/traces/traceStore';

/** A trace in the pick: when it started, its first span's name and service, how many spans and how long. */
export function traceLabel(t: UnlinkedTrace, first: StoredSpan | undefined): { label: string; description: string; detail: string } {
  const ms = (t.endUs - t.startUs) / 1000;
  const took = ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
  return {
    label: plainIconText(first ? first.name : t.traceId),
    description: plainIconText(
      [first?.service, new Date(t.startUs / 1000).toISOString().replace('T', ' ').slice(0, 19)].filter(Boolean).join(' · '),
    ),
    detail: plainIconText(
      l10n.t('{0}, {1} · trace {2}', t.spanCount === 1 ? l10n.t('1 span') : l10n.t('{0} spans', t.spanCount), took, t.traceId),
    ),
  };
}
