/**
 * What a replayed call hands the SDK for a recorded list of content parts (src/agents/replay/replayedTools.ts): text
 * and image parts as the SDK's tool outputs, which it sends back to the model as the same parts; anything it could
 * not send whole (a file, an unknown key) is refused, so the caller sends the JSON text instead of losing a part.
 */
import { strict as assert } from 'node:assert';
import { sdkToolOutput } from '../../../../src/agents/replay/replayedTools';

describe('replay: recorded content parts as SDK tool outputs', () => {
  it('turns text and image parts into the SDK tool outputs, in order', () => {
    assert.deepEqual(
      sdkToolOutput([
        { type: 'input_text', text: 'chart:' },
        { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
        { type: 'input_image', file_id: 'file_1' },
      ]),
      [
        { type: 'text', text: 'chart:' },
        { type: 'image', image: 'data:image/png;base64,AAAA', detail: 'low' },
        { type: 'image', image: { fileId: 'file_1' } },
      ],
    );
  });

  it('refuses what it cannot send whole: files, unknown keys, mixed image sources, non-lists', () => {
    for (const output of [
      [{ type: 'input_file', file_id: 'f' }],
      [{ type: 'input_text', text: 'x', annotations: [] }],
      [
        { type: 'input_text', text: 'x' },
        { type: 'output_text', text: 'y' },
      ],
      [{ type: 'input_image', image_url: 'u', file_id: 'f' }],
      [{ type: 'input_image' }],
      [{ type: 'input_image', image_url: 'u', detail: 3 }],
      [{ type: 'input_text' }],
      [null],
      [],
      { type: 'input_text', text: 'x' },
      42,
      null,
    ])
      assert.equal(sdkToolOutput(output), null, JSON.stringify(output));
  });
});
