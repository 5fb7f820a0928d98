/**
 * The spans an agent command sent (CUSTOM `agent-sessions.spans` with the agents SDK's exported spans, or
 * `agent-sessions.otlp` with an OTLP JSON export: docs/agent-command.md §4) → trace store records linked to the run's
 * session, branch and turn, as the extension's own runs are. What is not a span is counted and left out.
 */
import { sdkSpanRecord, isSdkSpanJson } from '../sdkSpans';
import { spansFromRequest } from '../../store/traces/otlpRequest';
import { spanRecordOf } from '../../store/traces/spanConventions';
import type { SpanRecord, TraceLink } from '../../store/traces/spanRecord';

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
