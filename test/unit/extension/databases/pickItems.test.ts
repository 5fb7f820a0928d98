/**
 * The palette's quick pick items (src/extension/databases/pickItems.ts) show outside words (file names, session ids,
 * branch names, message previews) as written: VS Code draws no icon from them (its rule: test/support/vscodeIcons.ts).
 */
import { strict as assert } from 'node:assert';
import {
  compareBranchItem,
  fileItem,
  importBranchItems,
  sessionItem,
  switchBranchItem,
  turnItem,
} from '../../../../src/extension/databases/pickItems';
import { drawn } from '../../../support/vscodeIcons';

/** Every string an item shows, and the icons VS Code would draw from each. */
function iconsIn(item: object): string[] {
  return Object.values(item)
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => drawn(v).icons);
}

describe('quick pick items of the palette', () => {
  const branch = { branchId: '$(pass) passed', parentBranchId: 'main$(loading~spin)', forkTurn: 2, userTurns: 3 };

  it('draw no icon from a file name or path', () => {
    const item = fileItem('/work/$(check) ok/$(pass) sessions.db');
    assert.deepEqual(iconsIn(item), []);
    assert.equal(drawn(item.label).shown, '$(pass) sessions.db');
    assert.equal(drawn(item.description).shown, '/work/$(check) ok/$(pass) sessions.db');
  });

  it('draw no icon from a session id', () => {
    const item = sessionItem({ sessionId: '$(check) verified session', messageCount: 4 });
    assert.deepEqual(iconsIn(item), []);
    assert.equal(drawn(item.label).shown, '$(check) verified session');
  });

  it('draw no icon from a branch name or its parent, switching or comparing', () => {
    for (const item of [switchBranchItem(branch, true), switchBranchItem(branch, false), compareBranchItem(branch)]) {
      assert.deepEqual(iconsIn(item), [], JSON.stringify(item));
      assert.equal(drawn(item.label).shown, '$(pass) passed');
      assert.ok(drawn(item.description).shown.includes('from main$(loading~spin) @ turn 2'), item.description);
    }
  });

  it('still write out invisible characters in a branch name', () => {
    assert.equal(compareBranchItem({ ...branch, branchId: 'main\u200b' }).label, 'main<U+200B>');
  });

  it('draw no icon from a message preview, or the reason there is none', () => {
    const item = turnItem({ turn: 3, preview: '$(check) All tests passed $(rocket)', error: null });
    assert.deepEqual(iconsIn(item), []);
    assert.equal(item.label, 'Turn 3');
    assert.equal(drawn(item.description).shown, '$(check) All tests passed $(rocket)');
    assert.deepEqual(iconsIn(turnItem({ turn: 4, preview: null, error: 'bad row $(error)' })), []);
  });

  it('draw no icon from the branch an imported file holds', () => {
    const items = importBranchItems('$(pass)');
    assert.deepEqual(items.flatMap(iconsIn), []);
    assert.deepEqual(
      items.map((i) => [drawn(i.label).shown, i.asMain]),
      [
        ["Import '$(pass)' as main", true],
        ["Keep the name '$(pass)'", false],
      ],
    );
  });
});
