/**
 * The configured agents of the host, one per model: a what-if run on another model needs an agent (a client, MCP
 * servers) of its own, and several retries on one model share one. All of them belong to one configuration (the
 * settings, trust, folder and key, summed up by the caller as a key); a new key closes them all. Synchronous up to
 * the build, so parallel runs never build one model twice nor keep an agent of an older configuration.
 */
import type { AgentConfig, ConfiguredAgent } from './agentConfig';

/** The configuration of a run on `model` (undefined or the configured model: the settings as they are). */
export function configForModel(config: AgentConfig, model: string | undefined): AgentConfig {
  return model === undefined || model === config.model ? config : { ...config, model, forceModel: true };
}

export class AgentsByModel {
  private key: string | undefined;
  private readonly agents = new Map<string, Promise<ConfiguredAgent>>();

  /**
   * The agent for `config` (keyed by its model), built with `build` on first use. A `key` other than the last one
   * closes every cached agent first. A build that fails is not kept: the next run tries again.
   */
  get(key: string, config: AgentConfig, build: (config: AgentConfig) => Promise<ConfiguredAgent>): Promise<ConfiguredAgent> {
    if (this.key !== key) {
      void this.clear();
      this.key = key;
    }
    const cached = this.agents.get(config.model);
    if (cached) return cached;
    const built = build(config);
    this.agents.set(config.model, built);
    built.catch(() => {
      if (this.agents.get(config.model) === built) this.agents.delete(config.model);
    });
    return built;
  }

  /** The models with an agent built or being built. */
  get models(): string[] {
    return [...this.agents.keys()];
  }

  /** Forgets every agent (at once) and closes them (their MCP servers). */
  async clear(): Promise<void> {
    const old = [...this.agents.values()];
    this.agents.clear();
    this.key = undefined;
    await Promise.all(old.map(async (agent) => (await agent.catch(() => undefined))?.close()));
  }
}
