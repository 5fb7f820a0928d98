/**
 * What the empty Timeline says: a turn has a timeline only when the run that wrote it recorded one, and each kind of
 * run records it differently (docs/traces.md, "Sources"). One line per kind, so a user whose agent is a command is not
 * told that "runs from this view record one" when theirs do not unless the command sends its spans.
 */
import { t } from '../../shared/l10n';

/** The kinds of run the hint speaks to, in the order shown. */
export type TimelineRunKind = 'built-in' | 'command' | 'elsewhere';

export interface TimelineHint {
  kind: TimelineRunKind;
  text: string;
}

/** The sentence above the hints. */
export function timelineHintLead(): string {
  return t('No trace is linked to this turn. What each kind of run needs to record one:');
}

export function timelineHints(): TimelineHint[] {
  return [
    {
      kind: 'built-in',
      text: t(
        'The built-in agent (Send and what-if runs in this view, and the demo): nothing; its runs are recorded while the setting agentSessions.traces.recordRuns is on (it is by default).',
      ),
    },
    {
      kind: 'command',
      text: t(
        "An agent command or agent URL: the agent sends its SDK's spans as agent-sessions.spans events (the Python and Node examples in examples/ do); a command that sends none leaves no timeline.",
      ),
    },
    {
      kind: 'elsewhere',
      text: t(
        'An agent running elsewhere: OTLP traces sent to the receiver (Start OTLP Trace Receiver) with gen_ai.conversation.id set to the session id, or a file imported with the command Import OTLP Traces.',
      ),
    },
  ];
}
