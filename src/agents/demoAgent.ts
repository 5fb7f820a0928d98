/**
 * The demo agent: a weather assistant with two function tools, driven by a scripted model. Used by `npm start` to
 * write a realistic session database through the real `@openai/agents` runner, without an API key.
 */
import { Agent, tool, type AgentInputItem } from '@openai/agents';
import { z } from 'zod';
import { ScriptedModel, type ScriptedReply } from './scriptedModel';

const FORECASTS: Record<string, { celsius: number; sky: string }> = {
  paris: { celsius: 18, sky: 'light rain' },
  tokyo: { celsius: 24, sky: 'clear skies' },
  oslo: { celsius: 7, sky: 'overcast' },
  lisbon: { celsius: 22, sky: 'sunshine' },
};

export const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    const f = FORECASTS[city.toLowerCase()];
    return f ? `${city}: ${f.celsius}°C, ${f.sky}` : `${city}: no forecast available`;
  },
});

export const convertTemperature = tool({
  name: 'convert_temperature',
  description: 'Convert Celsius to Fahrenheit',
  parameters: z.object({ celsius: z.number() }),
  execute: async ({ celsius }) => `${celsius}°C = ${Math.round((celsius * 9) / 5 + 32)}°F`,
});

function text(item: AgentInputItem): string {
  if (!('content' in item)) return '';
  const c = item.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c.map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join(' ');
}

/** The script: look up weather for a named city, convert when asked for Fahrenheit, then answer. */
export function weatherPolicy(input: AgentInputItem[]): ScriptedReply {
  let lastUser = -1;
  input.forEach((item, i) => {
    if ('role' in item && item.role === 'user') lastUser = i;
  });
  const question = lastUser >= 0 ? text(input[lastUser] as AgentInputItem) : '';
  const since = input.slice(lastUser + 1);
  const outputs = since
    .filter((i) => i.type === 'function_call_result')
    .map((i) => {
      if (!('output' in i)) return '';
      const o: unknown = i.output;
      // SDK 0.20 stores text outputs as { type: 'text', text }.
      if (typeof o === 'object' && o !== null && typeof (o as { text?: unknown }).text === 'string') return (o as { text: string }).text;
      return typeof o === 'string' ? o : JSON.stringify(o);
    });
  const called = new Set(since.filter((i) => i.type === 'function_call').map((i) => ('name' in i ? i.name : '')));
  const city = Object.keys(FORECASTS).find((c) => question.toLowerCase().includes(c));
  const wantsFahrenheit = /fahrenheit|°f/i.test(question);

  if (city && !called.has('get_weather')) {
    return { kind: 'tools', calls: [{ name: 'get_weather', arguments: { city: city[0]!.toUpperCase() + city.slice(1) } }] };
  }
  if (city && wantsFahrenheit && !called.has('convert_temperature')) {
    const celsius = FORECASTS[city]!.celsius;
    return { kind: 'tools', calls: [{ name: 'convert_temperature', arguments: { celsius } }] };
  }
  if (outputs.length > 0) return { kind: 'text', text: `Here is what I found: ${outputs.map((o) => o.replace(/^"|"$/g, '')).join('; ')}.` };
  return { kind: 'text', text: `I can look up the weather in ${Object.keys(FORECASTS).join(', ')}. Which city would you like?` };
}

/** A fresh demo agent on the scripted model; `idTag` goes into its ids (see `ScriptedModel`). */
export function createDemoAgent(idTag = ''): Agent {
  return new Agent({
    name: 'Weather assistant',
    instructions: 'You answer weather questions using the tools.',
    model: new ScriptedModel(weatherPolicy, undefined, idTag),
    tools: [getWeather, convertTemperature],
  });
}
