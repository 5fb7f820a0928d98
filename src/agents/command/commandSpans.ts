/**
 * The spans an agent command sent (CUSTOM `agent-sessions.spans` with the agents SDK's exported spans, or
 * `agent-sessions.otlp` with an OTLP JSON export: docs/agent-command.md §4) → trace store records linked to the run's
 * session, branch and turn, as the extension's own runs are. What is not a span is counted and left out.
 */
import { sdkSpanRecord, isSdkSpanJson } from '../sdkSpans';
import { spansFromRequest } from '../../store/traces/otlpRequest';
import { spanRecordOf } from '../../store/traces/spanConventions';
import type { SpanRecord, TraceLink } from '../../store/traces/spanRecord';
import { errorMessage } from '../../shared/errorMessage';
import { MAX_RUN_SPANS, type AgUiTranslator } from './agUiEvents';
import { MAX_RUN_SPAN_CHARS } from './commandLimits';

export interface CommandSpans {
  records: SpanRecord[];
  /** Values that were not spans (or OTLP spans without valid ids), with a reason each. */
  rejected: string[];
}

export function commandSpanRecords(sdkSpans: readonly unknown[], otlp: readonly unknown[], link: TraceLink): CommandSpans {
  const records: SpanRecord[] = [];
  const rejected: string[] = [];
  for (const span of sdkSpans) {
    if (isSdkSpanJson(span)) records.push(sdkSpanRecord(span, link, 'command'));
    else rejected.push('an agent-sessions.spans value without id and trace_id');
  }
  for (const request of otlp) {
    try {
      const batch = spansFromRequest(request);
      rejected.push(...batch.rejected.reasons);
      // The run knows its turn better than any attribute: every span is linked to it.
      for (const s of batch.spans) records.push({ ...spanRecordOf(s, 'command'), link });
    } catch (err) {
      rejected.push(err instanceof Error ? err.message : String(err));
    }
  }
  return { records, rejected };
}

/**
 * The spans the command sent, into the trace store (`sink`), linked to the branch it ran on and the turn it wrote. A
 * store that cannot take them, or values that are not spans, are logged: the run's outcome stands. `who` names the
 * agent in the log.
 */
export async function storeCommandSpans(args: {
  sink: ((records: SpanRecord[]) => Promise<unknown>) | undefined;
  translator: Pick<AgUiTranslator, 'sdkSpans' | 'otlp' | 'droppedSpans'>;
  link: TraceLink;
  who: string;
  log: (line: string) => void;
}): Promise<void> {
  const { sink, translator, who, log } = args;
  if (!sink || translator.sdkSpans.length + translator.otlp.length === 0) return;
  const { records, rejected } = commandSpanRecords(translator.sdkSpans, translator.otlp, args.link);
  if (rejected.length > 0) log(`${who} sent ${rejected.length} span value(s) that were left out: ${rejected.slice(0, 3).join('; ')}`);
  if (translator.droppedSpans > 0)
    log(
      `${who} sent spans past what a run keeps (${MAX_RUN_SPANS.toLocaleString('en-US')} spans, ` +
        `${MAX_RUN_SPAN_CHARS.toLocaleString('en-US')} characters: MAX_RUN_SPANS, MAX_RUN_SPAN_CHARS); ${translator.droppedSpans} were left out.`,
    );
  if (records.length === 0) return;
  try {
    await sink(records);
  } catch (err) {
    log(`The run's spans could not be stored: ${errorMessage(err)}`);
  }
}
