/**
 * Loading the user's own agent from a JavaScript module in the workspace. Loading a module runs its code with the
 * extension host's rights, so it is refused unless the workspace is trusted; the host passes VS Code's trust state.
 *
 * What a module may export (first match wins):
 *  - `agent`: an `Agent`;
 *  - `default`: an `Agent`, or an object with an `agent`, or a factory;
 *  - the module itself (`module.exports = agent`);
 *  - a factory function (as `default`, `createAgent` or `module.exports`) called with `{ sdk, z }`: `sdk` is the
 *    extension's own `@openai/agents` and `z` its zod, so a module needs no `node_modules` of its own and its
 *    agent is built with the same SDK copy that runs it.
 *
 * Reloading: CommonJS (`.cjs`, or `.js` without `"type": "module"` in the nearest package.json) is required afresh
 * after dropping the module, and files required from its folder, from `require.cache`. ES modules (`.mjs`, or
 * `.js` in a `"type": "module"` package) are imported with a `?mtime=` query, because Node has no way to evict
 * an ES module: each reload of a changed ES module keeps the old copy in memory until the host restarts.
 */
import * as sdk from '@openai/agents';
import { Agent } from '@openai/agents';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { errorMessage } from '../shared/errorMessage';

/** The workspace is not trusted, so no workspace code may run. */
export class UntrustedWorkspaceError extends Error {
  constructor(what: string) {
    super(`${what} is only used in a trusted workspace. Trust this workspace (Workspaces: Manage Workspace Trust) to use it.`);
    this.name = 'UntrustedWorkspaceError';
  }
}

/** The module could not be found, failed to load, or exports no agent. */
export class UserAgentModuleError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'UserAgentModuleError';
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** What a factory export receives. */
export interface UserAgentFactoryContext {
  /** The extension's `@openai/agents` (use `sdk.Agent`, `sdk.tool`). */
  sdk: typeof sdk;
  /** The extension's zod, for tool parameters. */
  z: typeof z;
}

/** A loaded agent and where it came from. */
export interface LoadedUserAgent {
  agent: Agent;
  /** The module's absolute real path. */
  path: string;
  /** The modification time the module was loaded at. */
  mtimeMs: number;
  format: 'commonjs' | 'module';
  /** Which export held the agent (`agent`, `default`, `default.agent`, `module.exports`, or `factory:<name>`). */
  exportName: string;
  /**
   * False when the agent was built with another copy of `@openai/agents` (the workspace's own `node_modules`):
   * it still runs, as the runner only calls the agent's methods, but versions may differ. The factory export
   * avoids that.
   */
  sameSdk: boolean;
}

export interface LoadUserAgentOptions {
  /** VS Code's workspace trust; nothing is read or run when false. */
  trusted: boolean;
  /** Resolve a relative `modulePath` against this folder (the workspace folder). */
  baseDir?: string;
  /** When set, the module must lie inside this folder (after resolving symlinks). */
  allowedRoot?: string;
}

/**
 * Loads `modulePath` and returns its agent. Each call loads afresh; use `UserAgentModuleCache` to reload only when
 * the file changed.
 */
export async function loadUserAgentModule(modulePath: string, options: LoadUserAgentOptions): Promise<LoadedUserAgent> {
  if (!options.trusted) throw new UntrustedWorkspaceError(`The agent module ${modulePath}`);
  const path = locate(modulePath, options);
  const mtimeMs = statSync(path).mtimeMs;
  const format = moduleFormat(path);
  let exports: unknown;
  try {
    exports = format === 'commonjs' ? requireFresh(path) : await import(`${pathToFileURL(path).href}?mtime=${mtimeMs}`);
  } catch (err) {
    throw new UserAgentModuleError(`Loading the agent module ${path} failed: ${errorMessage(err)}`, { cause: err });
  }
  const { agent, exportName } = await findAgent(exports, path);
  return { agent, path, mtimeMs, format, exportName, sameSdk: agent instanceof Agent };
}

/**
 * Keeps the last loaded agent per module path and reloads it when the modification time changes, so the host can
 * call `get` before every run (or from a file watcher) cheaply.
 */
export class UserAgentModuleCache {
  private readonly entries = new Map<string, LoadedUserAgent>();

  /**
   * The agent of `modulePath` as of `mtimeMs` (pass the file's current mtime; omitted: read it now). Loads when
   * nothing is cached or the cached copy is older; a failed reload keeps no stale agent.
   */
  async get(modulePath: string, mtimeMs: number | undefined, options: LoadUserAgentOptions): Promise<LoadedUserAgent> {
    if (!options.trusted) throw new UntrustedWorkspaceError(`The agent module ${modulePath}`);
    const path = locate(modulePath, options);
    const current = mtimeMs ?? statSync(path).mtimeMs;
    const cached = this.entries.get(path);
    if (cached && cached.mtimeMs === current) return cached;
    this.entries.delete(path);
    const loaded = await loadUserAgentModule(path, options);
    this.entries.set(path, loaded);
    return loaded;
  }

  /** Forgets every cached agent (e.g. when the workspace loses trust or the setting changes). */
  clear(): void {
    this.entries.clear();
  }
}

/** True when `value` is an Agent of this SDK copy, or has an Agent's shape (one built with another copy). */
export function isAgentLike(value: unknown): value is Agent {
  if (value instanceof Agent) return true;
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.name === 'string' &&
    typeof v.clone === 'function' &&
    typeof v.getAllTools === 'function' &&
    typeof v.getSystemPrompt === 'function' &&
    typeof v.asTool === 'function'
  );
}

function locate(modulePath: string, options: LoadUserAgentOptions): string {
  const absolute = isAbsolute(modulePath) ? modulePath : resolve(options.baseDir ?? process.cwd(), modulePath);
  if (!existsSync(absolute)) throw new UserAgentModuleError(`The agent module ${absolute} does not exist.`);
  const real = realpathSync(absolute);
  if (options.allowedRoot !== undefined) {
    const root = realpathSync(options.allowedRoot);
    const rel = relative(root, real);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
      throw new UserAgentModuleError(`The agent module ${absolute} is outside the workspace folder ${root}.`);
    }
  }
  return real;
}

function moduleFormat(path: string): 'commonjs' | 'module' {
  const ext = extname(path);
  if (ext === '.mjs') return 'module';
  if (ext === '.cjs') return 'commonjs';
  if (ext !== '.js') throw new UserAgentModuleError(`The agent module ${path} must be a .js, .cjs or .mjs file.`);
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (dirname(dir) === dir) return 'commonjs';
  }
}

/**
 * Requires `path` afresh. Drops the module and the files cached from its folder (its own helpers), but not
 * `node_modules`: reloading a dependency would make a second copy of packages such as `@openai/agents`.
 */
function requireFresh(path: string): unknown {
  const req = createRequire(path);
  const folder = dirname(path) + sep;
  for (const key of Object.keys(req.cache)) {
    if (key.startsWith(folder) && !key.slice(folder.length).split(sep).includes('node_modules')) delete req.cache[key];
  }
  return req(path);
}

async function findAgent(exports: unknown, path: string): Promise<{ agent: Agent; exportName: string }> {
  const mod =
    (typeof exports === 'object' || typeof exports === 'function') && exports !== null ? (exports as Record<string, unknown>) : {};
  const def = mod.default as Record<string, unknown> | undefined;
  const candidates: [string, unknown][] = [
    ['agent', mod.agent],
    ['default', def],
    ['default.agent', typeof def === 'object' && def !== null ? def.agent : undefined],
    ['module.exports', exports],
  ];
  for (const [name, value] of candidates) if (isAgentLike(value)) return { agent: value, exportName: name };
  const factories: [string, unknown][] = [
    ['default', def],
    ['createAgent', mod.createAgent],
    ['default.createAgent', typeof def === 'object' && def !== null ? def.createAgent : undefined],
    ['module.exports', exports],
  ];
  for (const [name, value] of factories) {
    if (typeof value !== 'function') continue;
    let made: unknown;
    try {
      made = await (value as (context: UserAgentFactoryContext) => unknown)({ sdk, z });
    } catch (err) {
      throw new UserAgentModuleError(`The agent factory '${name}' in ${path} threw: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    if (isAgentLike(made)) return { agent: made, exportName: `factory:${name}` };
    throw new UserAgentModuleError(`The agent factory '${name}' in ${path} returned ${describe(made)}, not an Agent.`);
  }
  const keys = Object.keys(mod);
  throw new UserAgentModuleError(
    `${path} exports no Agent. Export one as 'agent' or as the default export, or export a factory function ({ sdk, z }) => Agent.` +
      (keys.length > 0 ? ` It exports: ${keys.join(', ')}.` : ''),
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof ctor === 'string' && ctor !== 'Object' ? `a ${ctor}` : 'an object';
}
