import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = 'asi-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Copies a fixture into `dir` (opening a WAL file creates -wal/-shm files, which must not touch the original). */
export function copyFixture(fixturePath: string, dir: string): string {
  const target = join(dir, basename(fixturePath));
  copyFileSync(fixturePath, target);
  return target;
}
