import { strict as assert } from 'node:assert';
import { itemCountLabel, tokenCountLabel, turnUsageLabel } from '../../../../webview/conversation/logic/itemCount';
import { needsApiKey } from '../../../../webview/conversation/logic/runRemedy';

describe('conversation view labels and remedies', () => {
  it('counts items in the singular and the plural', () => {
    assert.equal(itemCountLabel(1), '1 item');
    assert.equal(itemCountLabel(0), '0 items');
    assert.equal(itemCountLabel(2), '2 items');
    assert.equal(itemCountLabel(12345), '12,345 items');
    assert.equal(tokenCountLabel(1), '1 token');
    assert.equal(tokenCountLabel(1500), '1,500 tokens');
  });

  it('says "no usage" of a turn that recorded none, but nothing of the items before the first turn (no run)', () => {
    assert.equal(turnUsageLabel(3, null), 'no usage');
    assert.equal(turnUsageLabel(3, 1500), '1,500 tokens');
    assert.equal(turnUsageLabel(0, null), null);
    assert.equal(turnUsageLabel(0, 12), '12 tokens');
  });

  it('offers Set API Key when no key was set or the server refused the key, not for other failures', () => {
    assert.ok(needsApiKey('no-key', undefined, 'No API key is set for the OpenAI API.'));
    assert.ok(needsApiKey('http', 401, 'The model server answered HTTP 401'));
    // A refusal to start the run at all reaches the view as an error message only.
    assert.ok(needsApiKey('other', undefined, "No API key is set for the OpenAI API. Run 'Agent Sessions: Set API Key'"));
    assert.ok(!needsApiKey('http', 500, 'The model server answered HTTP 500'));
    assert.ok(!needsApiKey('unreachable', undefined, 'Could not reach the server'));
    assert.ok(!needsApiKey('cancelled', undefined, 'The run was cancelled.'));
  });
});
