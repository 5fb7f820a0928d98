/**
 * Lints the extension manifest against the code: every contributed command has the prefix, a title, a category
 * and a registration; every menu entry names a declared command; context-only commands stay out of the palette.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CommandId, Setting, ViewId } from '../../src/extension/core/contributions';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string;
  contributes: {
    commands: { command: string; title?: string; category?: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
    views: Record<string, { id: string }[]>;
    viewsContainers: { activitybar: { id: string; icon: string }[] };
    viewsWelcome: { view: string; contents: string }[];
    configuration: { properties: Record<string, unknown> };
  };
};
const nls = JSON.parse(readFileSync(join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
/** The English text of a manifest string: `%key%` is looked up in package.nls.json (package.nls.test.ts checks the keys). */
const english = (text: string | undefined): string | undefined => text?.replace(/^%([^%]+)%$/, (_, key: string) => nls[key] ?? text);
const contributed = manifest.contributes.commands;
const declared = new Set(contributed.map((c) => c.command));
const extensionSources = new Map(
  readdirSync(join(root, 'src', 'extension'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [f, readFileSync(join(root, 'src', 'extension', f), 'utf8')] as const),
);

describe('extension manifest', () => {
  it('contributes exactly the commands the code knows, each with the prefix, a title and a category', () => {
    assert.deepEqual([...declared].sort(), Object.values(CommandId).sort());
    for (const c of contributed) {
      assert.match(c.command, /^agentSessions\.[a-z][A-Za-z]+$/, c.command);
      assert.ok(english(c.title)?.trim(), `${c.command} has a title`);
      assert.equal(english(c.category), 'Agent Sessions', `${c.command} has the category`);
    }
  });

  it('has exactly one handler for every command in the one command table', () => {
    // A feature declares its slice as CommandsOf<'a' | 'b'>; featureTables.ts spreads the slices into a CommandTable,
    // which must have every key (a compile error otherwise), but a key in two slices would silently override the first.
    const owners = new Map<string, string[]>();
    for (const [file, source] of extensionSources)
      for (const m of source.matchAll(/CommandsOf<([^>]+)>/g))
        if (!file.endsWith('commandTable.ts'))
          for (const key of m[1]!.matchAll(/'(\w+)'/g)) owners.set(key[1]!, [...(owners.get(key[1]!) ?? []), file]);
    assert.deepEqual([...owners.keys()].sort(), Object.keys(CommandId).sort());
    for (const [key, files] of owners) assert.equal(files.length, 1, `${key} is contributed by ${files.join(', ')}`);
    const tables = extensionSources.get('featureTables.ts') ?? '';
    for (const m of [...extensionSources.values()].join('\n').matchAll(/export function (\w+Commands)\(s: Services\)/g))
      assert.match(tables, new RegExp(`\\.\\.\\.${m[1]}\\(services\\)`), `${m[1]} is spread into the table in featureTables.ts`);
  });

  it('names only declared commands in menus, and hides context-only commands from the palette', () => {
    for (const [menu, entries] of Object.entries(manifest.contributes.menus)) {
      for (const e of entries) assert.ok(declared.has(e.command), `${menu} names undeclared ${e.command}`);
    }
    const palette = new Map(manifest.contributes.menus.commandPalette?.map((e) => [e.command, e.when]) ?? []);
    const itemMenus = manifest.contributes.menus['view/item/context'] ?? [];
    const contextOnly = [
      CommandId.closeDatabase,
      CommandId.branchFromTurn,
      CommandId.deleteBranch,
      CommandId.copyItemJson,
      CommandId.revealInConversationView,
      CommandId.toggleReadOnly,
    ];
    for (const id of contextOnly) {
      assert.equal(palette.get(id), 'false', `${id} is hidden from the palette`);
      assert.ok(
        itemMenus.some((e) => e.command === id),
        `${id} is reachable from a context menu`,
      );
    }
  });

  it('matches context values by capability flags, never by the whole string', () => {
    for (const e of manifest.contributes.menus['view/item/context'] ?? []) {
      assert.ok(
        e.when?.includes(`view == ${ViewId.sessions}`) || e.when?.includes(`view == ${ViewId.checkResults}`),
        `${e.command} is scoped to the view`,
      );
      assert.ok(!/viewItem ==/.test(e.when ?? ''), `${e.command} matches viewItem with =~`);
    }
  });

  it('declares the view, its container, the welcome content and prefixed settings', () => {
    assert.deepEqual(
      manifest.contributes.viewsContainers.activitybar.map((c) => c.id),
      [ViewId.container],
    );
    assert.deepEqual(
      manifest.contributes.views[ViewId.container]?.map((v) => v.id),
      [ViewId.sessions, ViewId.searchResults, ViewId.checkResults],
    );
    assert.ok(
      manifest.contributes.viewsWelcome.some(
        (w) => w.view === ViewId.sessions && english(w.contents)?.includes(`command:${CommandId.openDatabase}`),
      ),
    );
    for (const key of Object.keys(manifest.contributes.configuration.properties)) assert.match(key, new RegExp(`^${Setting.section}\\.`));
    // Every setting the code reads is contributed, and every contributed one is read (the group `agent` is not a setting).
    const read = Object.entries(Setting)
      .filter(([name]) => name !== 'section' && name !== 'agent')
      .map(([, key]) => `${Setting.section}.${key}`);
    assert.deepEqual(read.sort(), Object.keys(manifest.contributes.configuration.properties).sort());
    assert.equal(manifest.main, './dist/extension.js');
  });
});
