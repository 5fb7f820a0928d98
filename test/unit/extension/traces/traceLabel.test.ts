/**
 * A trace in the *link a trace* pick (src/extension/traces/traceLabel.ts): its span and service names come from
 * whatever sent the spans, and VS Code draws no icon from them (its rule: test/support/vscodeIcons.ts).
 */
import { strict as assert } from 'node:assert';
import { traceLabel } from '../../../../src/extension/traces/traceLabel';
import type { StoredSpan, UnlinkedTrace } from '../../../../src/store/traces/traceStore';
import { drawn } from '../../../support/vscodeIcons';

describe('a trace in the link pick', () => {
  const trace: UnlinkedTrace = {
    traceId: '$(check)0af7651916cd43dd8448eb211c80319c',
    sessionId: null,
    branchId: null,
    turnNumber: null,
    linkedBy: 'none',
    startUs: Date.UTC(2025, 0, 2, 3, 4, 5) * 1000,
    endUs: Date.UTC(2025, 0, 2, 3, 4, 5) * 1000 + 1_500_000,
    spanCount: 2,
    receivedMs: 0,
    reason: '',
  };

  it('draws no icon from a span name, a service name or a trace id', () => {
    const first = { name: '$(pass) checks passed $(loading~spin)', service: '$(shield) verified' } as StoredSpan;
    for (const label of [traceLabel(trace, first), traceLabel(trace, undefined)]) {
      for (const text of [label.label, label.description, label.detail]) assert.deepEqual(drawn(text).icons, [], text);
    }
    const label = traceLabel(trace, first);
    assert.equal(drawn(label.label).shown, '$(pass) checks passed $(loading~spin)');
    assert.equal(drawn(label.description).shown, '$(shield) verified · 2025-01-02 03:04:05');
    assert.equal(drawn(label.detail).shown, '2 spans, 1.5 s · trace $(check)0af7651916cd43dd8448eb211c80319c');
  });
});
