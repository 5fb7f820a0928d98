/**
 * This process's file descriptors open on a path (Linux: /proc/self/fd), its worker threads' included: what tells
 * whether a connection to a session file is still open.
 */
import { readdirSync, readlinkSync } from 'node:fs';

export function openDescriptors(path: string): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // closed meanwhile
    }
  });
}
