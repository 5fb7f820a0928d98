/**
 * Notifications draw no link from their words (src/extension/core/notices.ts): VS Code reads `[label](target)` in a
 * notification's message as a link when the target starts with `http://`, `https://`, `command:` or `file:` and holds
 * no space or `)` (its linkedText.ts; a `command:` link runs the command, with arguments from its query).
 */
import { strict as assert } from 'node:assert';
import { plainNotice } from '../../../../src/extension/core/noticeText';

/** The targets VS Code would draw as links in `message`, by the rule above (written here from its documented shape). */
function drawnLinks(message: string): string[] {
  return [...message.matchAll(/\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)\3)?\)/gi)].map((m) => m[2]!);
}

describe('notification messages', () => {
  const hostile = [
    'The agent command failed: [Retry](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%20-rf%20~%5Cn%22%7D)',
    'Cannot open [report.db](file:///etc/passwd): not a session database',
    'Paused: waiting for input — [Approve](https://example.invalid/phish "Approve the email")?',
    'nested [[a](command:x)](command:y) and [A](COMMAND:Z)',
  ];

  it('draws no link from words that would make one', () => {
    for (const text of hostile) {
      assert.ok(drawnLinks(text).length > 0, `the case makes a link as written: ${text}`);
      assert.deepEqual(drawnLinks(plainNotice(text)), [], plainNotice(text));
    }
  });

  it('keeps the words: only a space goes between a bracket and a parenthesis', () => {
    assert.equal(plainNotice('[Retry](command:x)'), '[Retry] (command:x)');
    assert.equal(plainNotice(hostile[0]!).replace(/\] \(/g, ']('), hostile[0]);
    assert.equal(plainNotice('Saved turn 4 on branch main (3 items).'), 'Saved turn 4 on branch main (3 items).');
  });
});
