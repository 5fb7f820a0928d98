/**
 * The Sessions status bar item (src/extension/tree/statusBarText.ts) draws its state's icon, and no icon from the
 * file's name, the session id or the branch name (VS Code's rule: test/support/vscodeIcons.ts).
 */
import { strict as assert } from 'node:assert';
import { sessionStatusText } from '../../../../src/extension/tree/statusBarText';
import { drawn } from '../../../support/vscodeIcons';

describe('the Sessions status bar item', () => {
  it("draws the file state's icon only", () => {
    const text = sessionStatusText({
      dbPath: '/tmp/$(pass) ok.db',
      readonly: true,
      session: { sessionId: '$(check) s1', branchId: 'main $(loading~spin)' },
    });
    assert.deepEqual(drawn(text), { icons: ['lock'], shown: ' $(pass) ok.db › $(check) s1 › main $(loading~spin)' });
  });

  it('names the state: a problem, read-only, or a database', () => {
    assert.deepEqual(drawn(sessionStatusText({ dbPath: '/a/b.db', problem: true, readonly: true })), { icons: ['error'], shown: ' b.db' });
    assert.deepEqual(drawn(sessionStatusText({ dbPath: '/a/b.db' })).icons, ['database']);
  });
});
