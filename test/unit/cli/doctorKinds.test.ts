/**
 * `agent-sessions doctor` on the kinds of issue 45's second part: a finding with no repair of its own inside a kind
 * that has one says "none (reported only)" (text and --json), --fix names the indexes it created and the checkpoint,
 * and a file whose only finding is reported only exits 1 with nothing repaired.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { makeDoctorFixture } from '../../support/doctorFixtures';
import { runCliCaptured as cli } from '../../support/cliCapture';
import { tempDir } from '../../support/tempFiles';

describe('agent-sessions doctor: altered-schema, stale-wal, shared-message-structure', function () {
  this.timeout(20_000);
  const tmp = tempDir('asi-cli-doctor-kinds-');
  after(() => tmp.cleanup());
  let n = 0;
  const fixture = (kind: Parameters<typeof makeDoctorFixture>[0]) => {
    const file = join(tmp.dir, `${n++}-${kind}.db`);
    makeDoctorFixture(kind, file);
    return file;
  };

  it('altered-schema: only the missing index offers a repair; --fix creates it and leaves the rest', async () => {
    const file = fixture('altered-schema');
    const r = await cli('doctor', file, '--json');
    assert.equal(r.code, 1, r.stderr);
    const report = JSON.parse(r.stdout) as { findings: { detail: string; repair: string | null; repairable?: boolean }[] };
    const offered = report.findings.filter((f) => f.repair !== null);
    assert.equal(offered.length, 1);
    assert.match(offered[0]!.detail, /^index idx_structure_turn on message_structure is missing/);
    assert.ok(report.findings.filter((f) => f.repair === null).every((f) => f.repairable === false));
    const text = await cli('doctor', file);
    assert.equal((text.stdout.match(/repair: +none \(reported only\)/g) ?? []).length, 3);
    const fix = await cli('doctor', file, '--fix', '--backup', join(tmp.dir, 'schema.backup.db'));
    assert.equal(fix.code, 1, fix.stderr);
    assert.match(fix.stdout, /Repaired \(one transaction\): .* 1 missing index\(es\) created\./);
    assert.match(fix.stdout, /Re-check:[\s\S]*: 3 finding\(s\)/);
  });

  it('stale-wal: --fix says how many frames the checkpoint copied, and the re-check is clean', async () => {
    const file = fixture('stale-wal');
    const r = await cli('doctor', file);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^stale-wal: the -wal holds committed transactions the main file does not hold yet$/m);
    assert.match(r.stdout, /found: +\d+-stale-wal\.db-wal holds 1 committed transaction\(s\) in 12 frame\(s\)/);
    const fix = await cli('doctor', file, '--fix', '--backup', join(tmp.dir, 'wal.backup.db'));
    assert.equal(fix.code, 0, fix.stdout);
    assert.match(fix.stdout, /^Checkpoint: 12 -wal frame\(s\) copied into the file, -wal emptied\.$/m);
    assert.match(fix.stdout, /Re-check:\n.*: no findings/);
  });

  it('shared-message-structure: reported only, --fix repairs nothing and exits 1', async () => {
    const file = fixture('shared-message-structure');
    const fix = await cli('doctor', file, '--fix', '--backup', join(tmp.dir, 'shared.backup.db'));
    assert.equal(fix.code, 1);
    assert.match(fix.stdout, /upstream: +https:\/\/github\.com\/openai\/openai-agents-python\/pull\/4454/);
    assert.match(fix.stdout, /Nothing to repair: no finding here has a repair\./);
  });
});
