/**
 * Where workspace discovery searches when folders appear (src/extension/databases/discoveryScope.ts): a `**` glob is
 * searched inside each new folder, other globs across the workspace; folders inside another new folder, and bursts
 * past the bound, cost no search of their own; installs' folders are never searched.
 */
import { strict as assert } from 'node:assert';
import { MAX_NEW_FOLDERS, foldersToSearch, globInsideFolder, worthSearching } from '../../../../src/extension/databases/discoveryScope';

const same = (p: string) => p;

describe('workspace discovery in new folders', () => {
  it('searches a new folder with the same glob when the glob matches at any depth', () => {
    assert.equal(globInsideFolder('**/*.{db,sqlite,sqlite3}'), '**/*.{db,sqlite,sqlite3}');
    assert.equal(globInsideFolder('./**/*.db'), '**/*.db');
    assert.equal(globInsideFolder('**'), '**');
  });

  it('leaves a glob anchored at the workspace folder to a search of the workspace', () => {
    for (const glob of ['sessions/*.db', '*.db', 'data/**/*.sqlite', '**.db']) assert.equal(globInsideFolder(glob), undefined, glob);
  });

  it('searches a folder once, not again for the folders inside it', () => {
    assert.deepEqual(foldersToSearch(['new/deep', 'new', 'new/deep/er', 'other'], same), ['new', 'other']);
  });

  it('does not take a folder whose name starts like another for one inside it', () => {
    assert.deepEqual(foldersToSearch(['a', 'ab', 'a-b', 'a/b'], same), ['a', 'a-b', 'ab']);
  });

  it('reads Windows separators and repeated folders as one folder', () => {
    assert.deepEqual(foldersToSearch(['runs\\x', 'runs/x/', 'runs\\x\\y'], same), ['runs\\x']);
  });

  it('answers with the callers own folder values', () => {
    const a = { p: 'a' };
    const b = { p: 'a/b' };
    assert.deepEqual(
      foldersToSearch([b, a], (f) => f.p),
      [a],
    );
  });

  it('gives up on a burst past the bound, for one search of the workspace', () => {
    const many = Array.from({ length: MAX_NEW_FOLDERS + 1 }, (_, i) => `f${i}`);
    assert.equal(foldersToSearch(many, same), undefined);
    assert.equal(foldersToSearch(many.slice(1), same)?.length, MAX_NEW_FOLDERS);
    // Nested folders do not count against the bound.
    assert.equal(foldersToSearch([...many.map((f) => `top/${f}`), 'top'], same)?.length, 1);
  });

  it('never searches inside node_modules or .git', () => {
    assert.equal(worthSearching('node_modules/pkg/dist'), false);
    assert.equal(worthSearching('app/node_modules'), false);
    assert.equal(worthSearching('.git/objects/ab'), false);
    assert.equal(worthSearching('runs/2026-12-05'), true);
    assert.equal(worthSearching('my_node_modules_notes'), true);
  });
});
