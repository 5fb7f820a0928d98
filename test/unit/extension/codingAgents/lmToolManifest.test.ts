/**
 * package.json's Language Model tools are the query tools (src/store/query/queryTools.ts): the same names, model
 * descriptions and input schemas the MCP server sends, so the two can never drift apart. When this fails after a
 * change to the tool table, put `languageModelToolEntries()` (src/extension/codingAgents/lmToolManifest.ts) into
 * `contributes.languageModelTools`, and the English and Korean `lmTool.*` texts into package.nls*.json.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUERY_TOOLS } from '../../../../src/store/query/queryTools';
import {
  MCP_PROVIDER_ID,
  languageModelToolEntries,
  lmToolName,
  queryToolOf,
  toolIcon,
  toolReferenceName,
} from '../../../../src/extension/codingAgents/lmToolManifest';

const root = join(__dirname, '..', '..', '..', '..');
const read = <T>(file: string): T => JSON.parse(readFileSync(join(root, file), 'utf8')) as T;
const manifest = read<{
  contributes: { languageModelTools?: Record<string, unknown>[]; mcpServerDefinitionProviders?: { id: string; label: string }[] };
}>('package.json');
const en = read<Record<string, string>>('package.nls.json');
const ko = read<Record<string, string>>('package.nls.ko.json');

describe('Language Model tools in package.json', () => {
  it('are generated from the query tool table, in its order', () => {
    assert.deepEqual(manifest.contributes.languageModelTools, languageModelToolEntries());
    assert.deepEqual(
      manifest.contributes.languageModelTools?.map((t) => t.name),
      QUERY_TOOLS.map((t) => `agentSessions_${t.name}`),
    );
  });

  it('give every tool a usable name, reference, icon and localized texts', () => {
    const references = new Set<string>();
    for (const tool of QUERY_TOOLS) {
      const name = lmToolName(tool);
      // Model APIs take function names of at most 64 characters from [A-Za-z0-9_-].
      assert.match(name, /^[A-Za-z0-9_-]{1,64}$/, name);
      assert.equal(queryToolOf(name), tool);
      const ref = toolReferenceName(tool.name);
      assert.match(ref, /^[a-z][A-Za-z]+$/, ref);
      assert.ok(!references.has(ref), `${ref} is unique`);
      references.add(ref);
      assert.ok(toolIcon(tool.name), `${tool.name} has an icon`);
      assert.equal(en[`lmTool.${tool.name}.displayName`], tool.title, `${tool.name}: the English display name is the tool's title`);
      for (const key of [`lmTool.${tool.name}.displayName`, `lmTool.${tool.name}.userDescription`]) {
        assert.ok(en[key]?.trim(), `${key} in English`);
        assert.ok(ko[key]?.trim(), `${key} in Korean`);
      }
    }
    assert.equal(toolReferenceName('read_turns'), 'readTurns');
    assert.equal(queryToolOf('read_turns'), undefined, 'only prefixed names are ours');
  });

  it('offers the MCP server definition provider the extension registers', () => {
    assert.deepEqual(
      manifest.contributes.mcpServerDefinitionProviders?.map((p) => p.id),
      [MCP_PROVIDER_ID],
    );
  });
});
