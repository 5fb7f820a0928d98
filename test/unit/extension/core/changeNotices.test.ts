/** The host's change notices: one per burst, numbered. */
import { strict as assert } from 'node:assert';
import { ChangeNotices } from '../../../../src/extension/core/changeNotices';
import type { ChangeNotice } from '../../../../src/shared/protocol/envelope';

/** Lets the event loop turn once, as the host does between one action and the next message. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('change notices', () => {
  it('sends one notice per burst, listing each kind once, with a sequence number that grows by one', async () => {
    const sent: ChangeNotice[] = [];
    const notices = new ChangeNotices((n) => sent.push(n));
    // One branch creation: the write (checkNow), then the current branch moves a few awaits later.
    notices.note(['turns', 'branches', 'usage']);
    await Promise.resolve();
    notices.note(['current-branch']);
    notices.note(['branches']);
    assert.equal(sent.length, 0, 'nothing is sent inside the burst');
    await nextTurn();
    assert.deepEqual(sent, [{ seq: 1, what: ['branches', 'current-branch', 'turns', 'usage'] }]);
    notices.note(['turns', 'branches', 'usage']);
    await nextTurn();
    notices.note(['database']);
    await nextTurn();
    assert.deepEqual(
      sent.map((n) => [n.seq, n.what.join(',')]),
      [
        [1, 'branches,current-branch,turns,usage'],
        [2, 'branches,turns,usage'],
        [3, 'database'],
      ],
    );
    assert.equal(notices.sequence, 3);
  });

  it('sends nothing for an empty burst or after dispose', async () => {
    const sent: ChangeNotice[] = [];
    const notices = new ChangeNotices((n) => sent.push(n));
    notices.note([]);
    await nextTurn();
    notices.note(['usage']);
    notices.dispose();
    await nextTurn();
    assert.deepEqual(sent, []);
    assert.equal(notices.sequence, 0);
  });
});
