import { strict as assert } from 'node:assert';
import {
  argumentTexts,
  readableJsonText,
  callArguments,
  isMessageItem,
  itemLabel,
  itemPreview,
  itemType,
  outputText,
  prettyJson,
  runValueText,
  toolName,
} from '../../../src/shared/itemText';

describe('itemText', () => {
  it('reads tool output as stored: text, a text part, content parts, else JSON', () => {
    assert.equal(outputText('sunny'), 'sunny');
    assert.equal(outputText({ type: 'text', text: 'sunny' }), 'sunny');
    assert.equal(outputText([{ type: 'input_text', text: 'a' }, { type: 'input_image' }]), 'a [image]');
    assert.equal(outputText({ temp: 21 }), '{"temp":21}');
    assert.equal(outputText(undefined), '');
    assert.equal(outputText({ temp: 21 }, { pretty: true }), '{\n  "temp": 21\n}');
  });

  it('reads a run value: a text part as text, structured output as JSON even when it has a text field', () => {
    assert.equal(runValueText(undefined), '');
    assert.equal(runValueText(null), '');
    assert.equal(runValueText('done'), 'done');
    assert.equal(runValueText({ type: 'text', text: 'done' }), 'done');
    assert.equal(runValueText({ text: 'a field' }), '{"text":"a field"}');
    assert.equal(runValueText(['a']), '["a"]');
  });

  it('pretty-prints JSON and JSON held in a string, and leaves other strings alone', () => {
    assert.equal(prettyJson('{"a":1}'), '{\n  "a": 1\n}');
    assert.equal(prettyJson('not json'), 'not json');
    assert.equal(prettyJson(undefined), 'undefined');
  });

  it('names tools, types and arguments', () => {
    assert.equal(toolName({ type: 'function_call', name: 'get_weather' }), 'get_weather');
    assert.equal(toolName({ type: 'web_search_call' }), 'web_search_call');
    assert.equal(toolName(null), 'tool');
    assert.equal(itemType({ role: 'user', content: 'hi' }), 'message');
    assert.equal(itemType({ id: 1 }), 'item');
    assert.equal(callArguments({ arguments: '{"city":"Paris"}' }), '{"city":"Paris"}');
    assert.equal(callArguments({ input: 'raw' }), 'raw');
    assert.equal(callArguments({ arguments: { city: 'Paris' } }), undefined);
    assert.ok(isMessageItem({ role: 'developer', content: '' }));
    assert.ok(!isMessageItem({ role: 'tool', content: '' }));
  });

  it('previews and labels items', () => {
    assert.equal(itemPreview({ role: 'user', content: 'What is\n the weather?' }), 'What is the weather?');
    assert.equal(
      itemPreview({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' }),
      'get_weather({"city":"Paris"})',
    );
    assert.equal(itemLabel({ role: 'user', content: 'hi' }), 'user: "hi"');
    assert.equal(
      itemLabel({ type: 'function_call_result', name: 'get_weather', output: { type: 'text', text: 'sunny' } }),
      'function_call_result get_weather: sunny',
    );
    assert.equal(itemLabel({ type: 'function_call', name: 'get_weather', arguments: '{}' }), 'function_call get_weather({})');
  });
});

describe('tool arguments for search and for people', () => {
  it('argumentTexts: the values of JSON arguments, decoded; names never; text that is not JSON as written', () => {
    assert.deepEqual(argumentTexts('{"city": "\\uc11c\\uc6b8", "celsius": 22, "tags": ["a", {"k": "caf\\u00e9"}], "ok": true}'), [
      '서울',
      '22',
      'a',
      'café',
    ]);
    assert.deepEqual(argumentTexts('{"n": 1.5e3, "s": ""}'), ['1500']);
    assert.deepEqual(argumentTexts('city=Lisbon'), ['city=Lisbon']);
    assert.deepEqual(argumentTexts(''), []);
  });

  it('readableJsonText: non-ASCII escapes as characters, surrogate pairs joined, everything else untouched', () => {
    assert.equal(readableJsonText('{"city": "\\uc11c\\uc6b8"}'), '{"city": "서울"}');
    assert.equal(readableJsonText('{"sky": "\\ud83c\\udf27"}'), '{"sky": "🌧"}');
    // An escaped backslash followed by "u00e9" is a backslash and text, not é; ASCII escapes stay (a quote, a newline).
    assert.equal(readableJsonText('{"p": "C:\\\\u00e9", "q": "\\u0022\\n"}'), '{"p": "C:\\\\u00e9", "q": "\\u0022\\n"}');
    assert.equal(readableJsonText('plain'), 'plain');
    assert.equal(
      itemPreview({ type: 'function_call', name: 'get_weather', arguments: '{"city": "S\\u00e3o Paulo"}' }),
      'get_weather({"city": "São Paulo"})',
    );
  });
});
