import { strict as assert } from 'node:assert';
import { markdownTree, safeHref, type MdNode } from '../../../../webview/conversation/logic/markdownTree';

/** All text of a tree, and every tag in it. */
function flatten(nodes: MdNode[]): { text: string; tags: string[]; hrefs: string[] } {
  const out = { text: '', tags: [] as string[], hrefs: [] as string[] };
  const walk = (ns: MdNode[]): void => {
    for (const n of ns) {
      if ('text' in n) out.text += n.text;
      else {
        out.tags.push(n.tag);
        if (n.href) out.hrefs.push(n.href);
        walk(n.children);
      }
    }
  };
  walk(nodes);
  return out;
}

const ALLOWED = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'em',
  'strong',
  's',
  'a',
  'br',
  'hr',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
]);

describe('markdownTree (safe Markdown for the conversation view)', () => {
  const hostile = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<style>body{display:none}</style>',
    '<iframe src="https://evil.invalid"></iframe>',
    '<a href="javascript:alert(1)">x</a>',
    '<div onclick="alert(1)">click</div>\n\nmore',
  ];
  for (const source of hostile) {
    it(`keeps raw HTML as text: ${source.slice(0, 30)}`, () => {
      const f = flatten(markdownTree(source));
      assert.ok(
        f.tags.every((t) => ALLOWED.has(t)),
        `tags ${f.tags.join(',')}`,
      );
      assert.ok(f.text.includes(source.split('\n')[0]!.slice(0, 10)), `text shows the source: ${f.text}`);
      assert.deepEqual(f.hrefs, []);
    });
  }

  it('drops link targets that are not web links, keeping the link text', () => {
    for (const target of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      'data:text/html,<b>x</b>',
      'vbscript:x',
      'file:///etc/passwd',
      'command:workbench.action.quit',
    ]) {
      const f = flatten(markdownTree(`[click](${target})`));
      assert.deepEqual(f.hrefs, [], target);
      assert.match(f.text, /click/);
    }
  });

  it('keeps http(s) links as data for the host to confirm', () => {
    const f = flatten(markdownTree('see [docs](https://example.com/a?b=1) and [plain](http://example.com)'));
    assert.deepEqual(f.hrefs, ['https://example.com/a?b=1', 'http://example.com']);
    assert.equal(safeHref(' https://x.example '), 'https://x.example');
    assert.equal(safeHref('//evil.example'), undefined);
  });

  it('turns images into text (nothing is loaded)', () => {
    const f = flatten(markdownTree('![a cat](https://example.com/cat.png)'));
    assert.ok(!f.tags.includes('img'));
    assert.equal(f.text, '[image: a cat]');
  });

  it('renders the usual Markdown structure', () => {
    const tree = markdownTree('# Title\n\nSome **bold** and *em* and `code`.\n\n- one\n- two\n\n```js\nlet x = "<b>";\n```');
    const f = flatten(tree);
    for (const tag of ['h1', 'p', 'strong', 'em', 'code', 'ul', 'li', 'pre']) assert.ok(f.tags.includes(tag), tag);
    assert.ok(f.text.includes('let x = "<b>";'));
  });
});
