/**
 * Agents and tools of the differential scenarios, shared by the tests and by the child process that resumes an
 * interrupted run (test/support/resumeApprovalChild.ts), which has to rebuild the same agent to read a RunState.
 */
import { Agent, tool, type AgentOptions, type Model } from '@openai/agents';
import { z } from 'zod';

export const weatherTool = tool({
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `Sunny in ${city}, 22°C`,
});

export const timeTool = tool({
  name: 'get_time',
  description: 'Local time in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `12:00 in ${city}`,
});

/** A tool that needs the user's approval before it runs. */
export const deleteTool = tool({
  name: 'delete_file',
  description: 'Deletes a file',
  parameters: z.object({ path: z.string() }),
  needsApproval: true,
  execute: async ({ path }) => `deleted ${path}`,
});

export function assistantAgent(model: Model, extra: Partial<AgentOptions> = {}): Agent {
  return new Agent({ name: 'Assistant', instructions: 'Answer briefly.', model, tools: [weatherTool, timeTool], ...extra });
}

export function approvalAgent(model: Model): Agent {
  return new Agent({ name: 'Janitor', instructions: 'Delete files when asked.', model, tools: [deleteTool] });
}
