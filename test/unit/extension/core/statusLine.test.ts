/** An outcome's words in the status bar (issue 40, item 8: the message was cut off): its first sentence, bounded. */
import { strict as assert } from 'node:assert';
import { MAX_STATUS_CHARS, outcomeStatus, statusLine } from '../../../../src/extension/core/statusLine';
import { drawn } from '../../../support/vscodeIcons';

describe('status-bar line of an outcome', () => {
  it('is the first sentence of a message of several (the notification has the rest)', () => {
    const created =
      "Created branch 'main-turn-2'. It shares turn 1 with 'main': the next message is its turn 2. It is now the current branch here.";
    assert.equal(statusLine(created), "Created branch 'main-turn-2'.");
  });

  it('does not end a sentence at a dot inside a model name or a size', () => {
    assert.equal(statusLine('Exported 1.2 GB with gpt-4.1-mini to out.jsonl'), 'Exported 1.2 GB with gpt-4.1-mini to out.jsonl');
  });

  it(`is at most ${MAX_STATUS_CHARS} characters, ending with an ellipsis when cut`, () => {
    const long = `Saved ${'x'.repeat(200)} here`;
    const line = statusLine(long);
    assert.equal(Array.from(line).length, MAX_STATUS_CHARS);
    assert.ok(line.endsWith('…'));
    assert.equal(statusLine('  Short\nmessage  '), 'Short message');
  });
});

describe('status-bar text of an outcome', () => {
  it("draws the outcome's icon, and none from the words of its message", () => {
    const text = outcomeStatus('check', 'Exported $(pass) session.md to /tmp/$(check) out. Open it?');
    assert.deepEqual(drawn(text), { icons: ['check'], shown: ' Exported $(pass) session.md to /tmp/$(check) out.' });
    assert.deepEqual(drawn(outcomeStatus('error', '$(pass)')), { icons: ['error'], shown: ' $(pass)' });
  });
});
