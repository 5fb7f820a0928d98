/**
 * The Korean bundle (l10n/bundle.l10n.ko.json) against the code: every string the host (`vscode.l10n.t`), the shared
 * modules and the webview (`t()`) localize has a Korean entry with the same `{0}` placeholders, and the bundle keeps no
 * entry the code no longer asks for. The keys are read from the source with the TypeScript parser
 * (test/support/l10nStrings.ts), so a new message without a translation fails here, not in a Korean user's hands.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localizedStrings, placeholders } from '../../support/l10nStrings';

const root = join(__dirname, '..', '..', '..');
const ko = JSON.parse(readFileSync(join(root, 'l10n', 'bundle.l10n.ko.json'), 'utf8')) as Record<string, string>;
const { strings, unreadable } = localizedStrings(root);

describe('l10n/bundle.l10n.ko.json', () => {
  it('finds the localized strings of the host and the webview', () => {
    // A floor, so a scanner that silently finds nothing cannot pass the tests below.
    assert.ok(
      strings.some((s) => s.file.startsWith('src/extension/')),
      'host strings found',
    );
    assert.ok(strings.length > 100, `${strings.length} strings found`);
  });

  it('has a literal English text in every localization call (the key must be readable from the source)', () => {
    assert.deepEqual(
      unreadable.map((u) => `${u.file}:${u.line} ${u.text}`),
      [],
    );
  });

  it('has a Korean entry for every localized string', () => {
    const missing = strings.filter((s) => !ko[s.message]?.trim()).map((s) => `${s.file}:${s.line} ${JSON.stringify(s.message)}`);
    assert.deepEqual([...new Set(missing)], []);
  });

  it('keeps the placeholders of each message in its translation', () => {
    const differ = [...new Set(strings.map((s) => s.message))]
      .filter((m) => ko[m] !== undefined && placeholders(m).join() !== placeholders(ko[m]!).join())
      .map((m) => `${JSON.stringify(m)} → ${JSON.stringify(ko[m])}`);
    assert.deepEqual(differ, []);
  });

  it('has no entry the code no longer uses', () => {
    const used = new Set(strings.map((s) => s.message));
    assert.deepEqual(
      Object.keys(ko).filter((k) => !used.has(k)),
      [],
    );
  });
});
