/**
 * The name the doctor gives a backup when the user names none (`--fix` without `--backup`, VS Code's Quick Fix), in its
 * own small module: workspace discovery, which loads at activation, recognises those names without loading the doctor.
 */

/** The default backup path beside the file: the time in UTC, with only characters every file system accepts. */
export function defaultBackupPath(path: string, now = new Date()): string {
  return `${path}.doctor-backup-${now.toISOString().replace(/[:.]/g, '-')}.db`;
}

/** Whether `path` is named as `defaultBackupPath` names a backup (workspace discovery leaves those out). */
export function isDefaultBackupPath(path: string): boolean {
  return /\.doctor-backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.db$/.test(path);
}
