/**
 * Outside words draw no icon where VS Code draws `$(name)` as one (src/extension/core/iconText.ts), by VS Code's rule
 * (test/support/vscodeIcons.ts).
 */
import { strict as assert } from 'node:assert';
import { plainIconText, plainPromptText } from '../../../../src/extension/core/iconText';
import { drawn } from '../../../support/vscodeIcons';

describe('words from outside where VS Code draws icons', () => {
  const hostile = [
    '$(pass) all checks passed',
    'main $(loading~spin)',
    '$(check)$(check)$(error~spin)',
    'fix-$(git-branch)-2',
    'a\\$(check) b',
    'a\\\\$(check) b',
    '$(CHECK) $(x1-y2~Modifier)',
  ];

  it('draws no icon from words that would draw one, and shows them as written', () => {
    for (const text of hostile) {
      assert.ok(drawn(text).icons.length > 0 || text.includes('\\$('), `the case draws an icon as written: ${text}`);
      const plain = plainIconText(text);
      assert.deepEqual(drawn(plain).icons, [], plain);
      assert.equal(drawn(plain).shown, text, `shown as written: ${plain}`);
    }
  });

  it('leaves words that draw no icon alone', () => {
    for (const text of ['main', 'price $(12.50)', '$(a b)', '$()', '$(x~1)', 'cost: $5 (est.)', '(x)', '$(unclosed', '']) {
      assert.deepEqual(drawn(text).icons, [], `draws no icon as written: ${text}`);
      assert.equal(plainIconText(text), text);
    }
  });

  it('escapes the words only: an icon put in front of them is still drawn', () => {
    const text = `$(database) ${plainIconText('$(pass) db.sqlite')}`;
    assert.deepEqual(drawn(text), { icons: ['database'], shown: ' $(pass) db.sqlite' });
  });

  it('a prompt draws neither an icon nor a link', () => {
    const text = "Find the first user message on '$(pass) [Run](command:workbench.action.terminal.new)' containing…";
    const plain = plainPromptText(text);
    assert.deepEqual(drawn(plain).icons, []);
    assert.ok(!/\]\(command:/.test(plain), plain);
    assert.equal(drawn(plain).shown.replace(/\] \(/g, ']('), text);
  });
});
