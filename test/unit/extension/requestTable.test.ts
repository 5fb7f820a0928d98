/**
 * The conversation view's request table as the features contribute it (src/extension/core/viewRequests.ts): the
 * compiler holds the whole table to every request, but a method in two features' slices would silently answer with
 * whichever is spread last, and a slice not spread would leave its methods to the compiler's error alone.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { requestParams } from '../../../src/extension/conversation/requestChecks';

const folder = join(__dirname, '..', '..', '..', 'src', 'extension');
const sources = new Map(
  readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [f, readFileSync(join(folder, f), 'utf8')] as const),
);

describe('conversation view request table', () => {
  it('has each request but the handshake answered by exactly one feature, and every slice spread', () => {
    const owners = new Map<string, string[]>();
    for (const [file, source] of sources)
      for (const m of source.matchAll(/\): RequestsOf<([^>]+)>/g))
        for (const key of m[1]!.matchAll(/'([\w/]+)'/g)) owners.set(key[1]!, [...(owners.get(key[1]!) ?? []), file]);
    const methods = Object.keys(requestParams).filter((m) => m !== 'view/ready');
    assert.deepEqual([...owners.keys()].sort(), methods.sort());
    for (const [method, files] of owners) assert.equal(files.length, 1, `${method} is answered by ${files.join(', ')}`);
    const tables = sources.get('featureTables.ts') ?? '';
    for (const m of [...sources.values()].join('\n').matchAll(/export function (\w+Requests)\(\s*s: Services,?\s*\)/g))
      assert.match(tables, new RegExp(`\\.\\.\\.${m[1]}\\(services\\)`), `${m[1]} is spread into the table in featureTables.ts`);
  });
});
