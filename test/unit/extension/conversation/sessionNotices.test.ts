/** What a registry event means for the conversation view of one session: only its own database and session. */
import { strict as assert } from 'node:assert';
import { noticeKinds } from '../../../../src/extension/conversation/sessionNotices';

describe('session notices', () => {
  it('maps registry events to what the view of one session must re-read', () => {
    const ref = { dbPath: '/a.db', sessionId: 'alice' };
    assert.deepEqual(noticeKinds({ kind: 'rows', path: '/a.db' }, ref, false), ['turns', 'branches', 'usage']);
    assert.deepEqual(noticeKinds({ kind: 'rows', path: '/b.db' }, ref, false), [], 'another database');
    assert.deepEqual(noticeKinds({ kind: 'state', path: '/a.db' }, ref, false), ['database']);
    assert.deepEqual(noticeKinds({ kind: 'state', path: '/b.db' }, ref, true), []);
    assert.deepEqual(noticeKinds({ kind: 'current-branch', path: '/a.db', sessionId: 'alice' }, ref, false), ['current-branch']);
    assert.deepEqual(noticeKinds({ kind: 'current-branch', path: '/a.db', sessionId: 'bob' }, ref, false), [], 'another session');
    // Opening or closing another database changes the list, not this view; a reconnect of this one changes everything.
    assert.deepEqual(noticeKinds({ kind: 'list' }, ref, false), []);
    assert.deepEqual(noticeKinds({ kind: 'list' }, ref, true), ['database']);
  });
});
