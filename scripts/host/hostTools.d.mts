// Types for hostTools.mjs (plain JavaScript so scripts/test.mjs runs it without a build).
export interface Host {
  id: string;
  codeServer: string;
  vscode: string;
  node: string;
  /** Extra code-server command-line arguments this host needs. */
  serverArgs?: string[];
  ripgrep?: { pkg: string; tag: string };
}
export interface NodePaths {
  prefix: string;
  bin: string;
  binDir: string;
  headersDir: string;
}
export const ROOT: string;
export const CACHE: string;
export const STORE_NODE_VERSIONS: string[];
export const HOSTS: Host[];
export class InstallError extends Error {}
export function hostById(id: string): Host;
export function nodePaths(version: string): NodePaths;
export function ensureNode(version: string, log?: (line: string) => void): NodePaths;
export const BROWSER_PACKAGES: string[];
export const CODE_SERVER_BUILD_PACKAGES: string[];
/** Runs `fn` holding the install lock `name` (a directory under CACHE/locks/); waits while another process holds it. */
export function withLock<T>(name: string, fn: () => T, log?: (line: string) => void): T;
export function codeServerDebianPackages(host: Host): string[];
/** `node:<version>`, `host:<id>`, `servers` or `debian:<package>,…` (what scripts/test.mjs schedules). */
export function ensureNeed(need: string, log?: (line: string) => void): Promise<unknown>;
export function ensureDebianPackages(names: string[], log?: (line: string) => void): void;
export function ensureBrowser(log?: (line: string) => void): string;
export function codeServerPaths(host: Host): { dir: string; bin: string; entry: string };
export function hostEnv(host: Host, env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export function ensureCodeServer(host: Host, log?: (line: string) => void): string;
export function ensureHost(host: Host, log?: (line: string) => void): string;
