/**
 * The empty Timeline's hints (webview/conversation/logic/timelineHints.ts): one per kind of run, each saying what that
 * kind needs — the built-in agent only the recordRuns setting, a command or agent URL its spans as
 * `agent-sessions.spans` events, an agent elsewhere the OTLP receiver — and none telling a command's user that runs
 * from the view record a trace by themselves.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as l10n from '@vscode/l10n';
import { timelineHintLead, timelineHints } from '../../../../webview/conversation/logic/timelineHints';

const hint = (kind: string): string => {
  const found = timelineHints().find((h) => h.kind === kind);
  assert.ok(found, `a hint for ${kind}`);
  return found.text;
};

describe('the empty Timeline hints', () => {
  it('has one hint per kind of run, in a fixed order', () => {
    assert.deepEqual(
      timelineHints().map((h) => h.kind),
      ['built-in', 'command', 'elsewhere'],
    );
  });

  it('says the built-in agent records its runs while agentSessions.traces.recordRuns is on', () => {
    assert.match(hint('built-in'), /agentSessions\.traces\.recordRuns/);
    assert.match(hint('built-in'), /demo/);
  });

  it('says a command or agent URL must send its spans as agent-sessions.spans events, as the examples do', () => {
    const text = hint('command');
    assert.match(text, /agent-sessions\.spans/);
    assert.match(text, /examples\//);
    assert.match(text, /sends none leaves no timeline/);
  });

  it('says an agent elsewhere sends OTLP to the receiver with the session id, or a file is imported', () => {
    const text = hint('elsewhere');
    assert.match(text, /Start OTLP Trace Receiver/);
    assert.match(text, /gen_ai\.conversation\.id/);
    assert.match(text, /Import OTLP Traces/);
  });

  it('no longer tells everyone that runs from this view record one', () => {
    for (const text of [timelineHintLead(), ...timelineHints().map((h) => h.text)])
      assert.doesNotMatch(text, /Runs from this view record one/);
  });

  it('is translated in Korean, names and commands kept', () => {
    const ko = JSON.parse(readFileSync(join(__dirname, '../../../../l10n/bundle.l10n.ko.json'), 'utf8')) as Record<string, string>;
    l10n.config({ contents: ko });
    try {
      const texts = timelineHints().map((h) => h.text);
      assert.ok(
        texts.every((text) => /[가-힣]/.test(text)),
        texts.join('\n'),
      );
      assert.match(texts[0]!, /agentSessions\.traces\.recordRuns/);
      assert.match(texts[1]!, /agent-sessions\.spans/);
      assert.match(texts[2]!, /gen_ai\.conversation\.id/);
      assert.match(timelineHintLead(), /[가-힣]/);
    } finally {
      l10n.config({ contents: {} });
    }
  });
});
