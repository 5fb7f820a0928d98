/**
 * A read-only session file that a command would write (`import`, `doctor --fix`): exit 6 with advice in the command
 * line's words. The store's own message names its option (`readonly: true`), which the command line does not have.
 */
import { strict as assert } from 'node:assert';
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../src/store';
import { runSupportScript } from '../../support/childProcess';
import { DOCTOR_FIXTURE_DIR } from '../../support/doctorFixtures';
import { tempDir } from '../../support/tempFiles';

describe('agent-sessions on a read-only session file it would write', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-cli-read-only-');
  // A folder `nobody` can write (the child drops to it when root), holding files it cannot.
  before(() => chmodSync(tmp.dir, 0o1777));
  after(() => tmp.cleanup());

  const readOnlyCopy = (source: string, name: string): string => {
    const path = join(tmp.dir, name);
    copyFileSync(source, path);
    chmodSync(path, 0o444);
    return path;
  };

  async function cli(...args: string[]): Promise<{ code: number | null; stderr: string }> {
    const { done } = runSupportScript('cliAsNobody.ts', args, 45_000);
    const r = await done;
    return { code: r.code, stderr: r.stderr };
  }

  it("import: exit 6, saying to make it writable and what reads it as it is, not the library's readonly: true", async () => {
    const source = join(tmp.dir, 'source.db');
    const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: source, createTables: true });
    await s.addItems([{ role: 'user', content: 'hi' }]);
    s.close();
    const items = join(tmp.dir, 'items.jsonl');
    writeFileSync(items, '{"role":"user","content":"imported"}\n');
    const db = readOnlyCopy(source, 'import.db');
    const r = await cli('import', items, '--db', db, '--session', 'new');
    assert.equal(r.code, 6, r.stderr);
    assert.equal(
      r.stderr,
      `agent-sessions: ${db} is read-only, so it cannot be opened for writing. Make it writable to import into it; ls, show and export read it as it is.\n`,
    );
  });

  it('doctor --fix: exit 6, pointing to doctor without --fix', async () => {
    const db = readOnlyCopy(join(DOCTOR_FIXTURE_DIR, 'orphan-messages.db'), 'doctor.db');
    const r = await cli('doctor', db, '--fix');
    assert.equal(r.code, 6, r.stderr);
    assert.equal(
      r.stderr,
      `agent-sessions: ${db} is read-only, so it cannot be opened for writing. Make it writable to repair it; doctor without --fix reports on it as it is.\n`,
    );
    assert.equal((await cli('doctor', db)).code, 1, 'the report without --fix still works');
  });
});
