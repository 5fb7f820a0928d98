/**
 * Agent processes are started on a thread of their own (launcher.ts): libuv's spawn forks this process and then
 * blocks the thread that called it until the child has exec'd, which on a busy machine takes 7–13 ms per process
 * (the child waits for a core). A check starting eight agents at once would stall its own thread for every one of
 * them; VS Code's extension host would stall likewise for every run.
 *
 * This is the thread's whole program, as source: a `new Worker(…, { eval: true })` needs no file beside the bundle
 * (the CLI, the extension host and the tests run from different places), and it uses nothing but Node's own modules.
 * It knows nothing of lines, signals' meaning or sessions: it starts a process, writes its stdin, and relays what
 * the process prints and how it ended. Stdout and stderr are paused while more than `maxInFlight` characters of
 * them wait to be taken by the other thread, so a process printing without end blocks on its pipe as it would if we
 * read it ourselves, and memory stays bounded.
 *
 * Each launch has a slot in the shared `pids` array (workerData), which says where its spawn is without a message:
 * 0 not begun, -1 under way, -2 cancelled by the other thread (never begun: this thread will not begin it), -3
 * failed, else the pid. A process about to exit (launcher.ts, `Launched.pidAtExit`) cancels what has not begun and
 * waits for what is under way, then kills it: its messages would never be read.
 *
 * Messages in: `spawn` {id, slot, command, options (spawn's, as `spawnOptions` makes them), stdin, maxInFlight}, `taken` {id, n}, `kill` {id, signal},
 * `release` {id}. Out: `spawned` {id, pid}, `out`/`err` {id, text}, `outEnd`/`errEnd` {id}, `error` {id, message,
 * spawned}, `exit` {id, code, signal}, `close` {id, code, signal} (always last).
 */
export const LAUNCHER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const pids = new Int32Array(workerData.pids);
const { spawn } = require('node:child_process');
const children = new Map();
const post = (m) => parentPort.postMessage(m);

function start(m) {
  const id = m.id;
  // Claimed, unless the other thread cancelled it first (it is exiting).
  if (Atomics.compareExchange(pids, m.slot, 0, -1) !== 0) return post({ t: 'close', id, code: null, signal: null });
  const settle = (value) => {
    Atomics.store(pids, m.slot, value);
    Atomics.notify(pids, m.slot);
  };
  let child;
  try {
    child = spawn(m.command, m.options);
  } catch (err) {
    settle(-3);
    post({ t: 'error', id, message: err && err.message ? err.message : String(err), spawned: false });
    post({ t: 'close', id, code: null, signal: null });
    return;
  }
  const entry = { child, inFlight: 0, paused: false, max: m.maxInFlight };
  children.set(id, entry);
  settle(child.pid !== undefined ? child.pid : -3);
  if (child.pid !== undefined) post({ t: 'spawned', id, pid: child.pid });
  const relay = (stream, kind) => {
    stream.setEncoding('utf8');
    stream.on('data', (text) => {
      entry.inFlight += text.length;
      post({ t: kind, id, text });
      if (entry.inFlight > entry.max && !entry.paused) {
        entry.paused = true;
        child.stdout.pause();
        child.stderr.pause();
      }
    });
    stream.on('end', () => post({ t: kind + 'End', id }));
    // A pipe destroyed on release reports an error: its end as far as the other thread cares.
    stream.on('error', () => post({ t: kind + 'End', id }));
  };
  relay(child.stdout, 'out');
  relay(child.stderr, 'err');
  // A command that never reads its input makes the write fail with EPIPE: its business, not an error.
  child.stdin.on('error', () => undefined);
  child.stdin.end(m.stdin);
  child.on('error', (err) => {
    post({ t: 'error', id, message: err.message, spawned: child.pid !== undefined });
    // A spawn that failed emits no 'close' when its pipes were never opened.
    if (child.pid === undefined) {
      children.delete(id);
      post({ t: 'close', id, code: null, signal: null });
    }
  });
  child.on('exit', (code, signal) => post({ t: 'exit', id, code, signal }));
  child.on('close', (code, signal) => {
    children.delete(id);
    post({ t: 'close', id, code, signal });
  });
}

parentPort.on('message', (m) => {
  if (m.t === 'spawn') return start(m);
  const entry = children.get(m.id);
  if (!entry) return;
  if (m.t === 'taken') {
    entry.inFlight -= m.n;
    if (entry.paused && entry.inFlight <= entry.max / 2) {
      entry.paused = false;
      entry.child.stdout.resume();
      entry.child.stderr.resume();
    }
  } else if (m.t === 'kill') {
    try {
      entry.child.kill(m.signal);
    } catch {}
  } else if (m.t === 'release') {
    entry.child.stdout.destroy();
    entry.child.stderr.destroy();
  }
});
`;
