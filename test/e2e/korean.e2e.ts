/**
 * The extension in Korean, in the real workbench: the display language set as a Korean language pack sets it (see
 * `displayLanguage` in workbench.ts), the command palette shows the Korean command titles (package.nls.ko.json), the
 * sidebar its Korean names, and the conversation view its Korean labels (l10n/bundle.l10n.ko.json through the page's
 * bundle) in a CJK font, not as empty boxes. Screenshots for the docs in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../scripts/demo';
import { ROOT, FLOW_THEMES, useWorkbench, docsScreenshot } from './suite';
import { viewFrame } from './workbench';

const KO = JSON.parse(readFileSync(join(ROOT, 'package.nls.ko.json'), 'utf8')) as Record<string, string>;
const BUNDLE = JSON.parse(readFileSync(join(ROOT, 'l10n', 'bundle.l10n.ko.json'), 'utf8')) as Record<string, string>;

/**
 * Whether the frame's font draws `text` with real glyphs: each character is drawn on a canvas and compared with a
 * character no font has (U+10FFFD, a private-use code point), which every font draws as the same empty box. Evaluated as
 * a string because the test project has no DOM types.
 */
const HAS_GLYPHS = (text: string): string => `(() => {
  const font = getComputedStyle(document.body).font;
  const draw = (ch) => {
    const c = document.createElement('canvas');
    c.width = 40; c.height = 40;
    const g = c.getContext('2d');
    g.font = font.replace(/\\d+(\\.\\d+)?px/, '28px');
    g.fillText(ch, 4, 32);
    return Array.from(g.getImageData(0, 0, 40, 40).data).join(',');
  };
  const tofu = draw('\\u{10FFFD}');
  return [...${JSON.stringify(text)}].filter((ch) => ch.trim()).map((ch) => [ch, draw(ch) !== tofu]);
})()`;

describe('the extension in Korean', function () {
  before(function () {
    // The UI suites install fonts-noto-cjk with Chromium (scripts/host/hostTools.mjs); without it every Korean
    // character is a box and the screenshots are useless.
    const fonts = spawnSync('fc-list', [':lang=ko', 'family'], { encoding: 'utf8' });
    assert.ok(fonts.stdout.trim(), 'a font with Korean glyphs is installed (fc-list :lang=ko)');
  });

  for (const theme of FLOW_THEMES) {
    describe(`${theme} theme`, function () {
      const suite = useWorkbench({
        name: 'korean',
        theme,
        prepare: (workspace) => writeDemoDatabase(join(workspace, 'conversations.db')),
        open: {
          displayLanguage: 'ko',
          titles: { container: KO['viewsContainer.agentSessions.title']!, view: KO['view.sessions.name']! },
        },
      });

      it('shows the Korean command titles in the command palette', async () => {
        const title = `${KO['category']}: ${KO['command.openDatabase.title']}`;
        assert.equal(title, '에이전트 세션: 세션 데이터베이스 열기…');
        await suite.wb.page.keyboard.press('F1');
        const input = suite.wb.page.locator('.quick-input-widget input.input');
        await input.waitFor();
        await input.fill(`>${title}`);
        await suite.wb.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
        await suite.wb.page.keyboard.press('Escape');
      });

      it('shows the conversation view in Korean, in a Korean font', async () => {
        await suite.wb.openSidebar();
        await suite.wb.treeRow('conversations.db').expand();
        // The host's strings (vscode.l10n.t) in the tree: the current branch and its turn count.
        await suite.wb.treeRow('weather-trip').expand();
        const main = await suite.wb.treeRow('main').waitFor();
        assert.match(await main.description(), new RegExp(`^● ${BUNDLE['current']} · ${BUNDLE['{0} turns']!.replace('{0}', '\\d+')}`));
        await suite.wb.treeRow('weather-trip').contextMenu(KO['command.openConversationView.title']!);
        const f = await viewFrame(suite.wb);
        await f.locator('.turn-row').first().waitFor({ timeout: 20_000 });
        await f.locator('.turn-row').first().click();
        // The page got the Korean bundle: <html lang> is the display language, and the labels are the bundle's.
        assert.equal(await f.evaluate('document.documentElement.lang'), 'ko');
        const turnTitle = f.locator('h2.turn-title').first();
        await turnTitle.waitFor();
        assert.equal(await turnTitle.textContent(), BUNDLE['Turn {0}']!.replace('{0}', '1'));
        assert.equal((await f.locator('vscode-panel-tab#tab-conversation').textContent())?.trim(), BUNDLE['Conversation']);
        const json = f.locator('vscode-button.open-branch-json');
        assert.equal((await json.textContent())?.trim(), BUNDLE['Open as JSON']);
        // No empty boxes: every character of the labels is drawn with a real glyph.
        const text = `${await turnTitle.textContent()}${await json.textContent()}`;
        const drawn = (await f.evaluate(HAS_GLYPHS(text))) as [string, boolean][];
        // The check can fail: a hieroglyph no installed font has is reported as a box.
        assert.deepEqual(await f.evaluate(HAS_GLYPHS('\u{13000}')), [['\u{13000}', false]]);
        assert.deepEqual(
          drawn.filter(([, ok]) => !ok).map(([ch]) => ch),
          [],
          'characters drawn as boxes',
        );
        await suite.wb.page.mouse.move(5, 5);
        await docsScreenshot(suite.wb, `korean-view-${theme}`);
      });
    });
  }
});
