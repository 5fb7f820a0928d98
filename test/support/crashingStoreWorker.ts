/**
 * The real store worker, made to crash for the crash tests: when a job reports progress before its end (an import
 * inside its transaction, with rows written and not committed), the thread exits at once, as a native fault or an
 * out-of-memory would end it, before the progress reaches the host. Only the tests load this file; the worker itself
 * has no such hook.
 */
import { parentPort } from 'node:worker_threads';
import '../../src/store/worker/storeWorker';

const port = parentPort!;
const post = port.postMessage.bind(port);
// The worker posts through `port.postMessage` at each answer, so replacing it here sees every message it sends.
port.postMessage = (message: unknown, transfer?: readonly import('node:worker_threads').TransferListItem[]) => {
  const m = message as { type?: string; done?: number; total?: number };
  // In a worker thread, process.exit ends the thread (not the process) without unwinding: no finally, no ROLLBACK.
  if (m.type === 'progress' && (m.done ?? 0) < (m.total ?? 0)) process.exit(70);
  post(message, transfer);
};
