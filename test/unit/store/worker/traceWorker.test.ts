/**
 * The trace store through the store worker (the extension's way: OTLP bodies decoded and stored off the host's
 * thread): a body in, spans back, and the trace errors rebuilt on this side as the same classes with their problems.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { TraceInputError, TraceStoreError } from '../../../../src/store/traces/traceErrors';
import { copyFixture } from '../../../support/tempFiles';
import { useWorkerClient } from '../../../support/workerClient';

const ROOT = join(__dirname, '..', '..', '..', '..');

const body = (sessionId: string) =>
  new TextEncoder().encode(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'chat gpt-4.1',
                  startTimeUnixNano: '1764685200000000000',
                  endTimeUnixNano: '1764685200400000000',
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                    { key: 'gen_ai.conversation.id', value: { stringValue: sessionId } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    }),
  );

describe('the trace store in the store worker', function () {
  this.timeout(30_000);
  const worker = useWorkerClient('asi-trace-worker-');
  const tmp = { dir: worker.dir };

  it('decodes and stores an OTLP body in the worker and reads the spans back', async () => {
    const store = await worker.client().openTraceStore(join(tmp.dir, 'traces.db'));
    const result = await store.call('ingestOtlp', body('alice'), 'json');
    assert.deepEqual([result.spans, result.traces, result.rejected, result.services], [1, 1, 0, ['svc']]);
    const [trace] = await store.call('tracesOfSession', 'alice');
    assert.equal(trace!.linkedBy, 'attribute');
    const spans = await store.call('spansOfTrace', trace!.traceId);
    assert.deepEqual([spans[0]!.kind, spans[0]!.endUs - spans[0]!.startUs], ['model', 400_000]);
    await store.close();
  });

  it('rebuilds the trace errors as their classes: a malformed body, a session file as the store', async () => {
    const store = await worker.client().openTraceStore(join(tmp.dir, 'errors.db'));
    await assert.rejects(
      store.call('ingestOtlp', new TextEncoder().encode('{"resourceSpans": '), 'json'),
      (e: unknown) => e instanceof TraceInputError && e.problem === 'malformed' && e.httpStatus === 400,
    );
    await store.close();
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), tmp.dir);
    await assert.rejects(
      worker.client().openTraceStore(session),
      (e: unknown) => e instanceof TraceStoreError && e.problem === 'not-trace-store',
    );
  });
});
