// The Responses handler over the real WebGPU engine in Chromium, on a generated random-weights model: forced tool
// calls come out as calls whose arguments validate against the tool's schema (constrained decoding on the GPU), and
// a JSON text.format answer parses and validates, streamed or not. Random weights cannot be trusted to do any of
// this by themselves, so every pass here is the constraint's doing.
import { beforeAll, expect, test } from 'vitest';
import { createWebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import { createResponsesHandler, type ResponsesHandler } from '../../src/responses/handler.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { loadFixtureIndex } from './forward-support.ts';

let handler: ResponsesHandler;

beforeAll(async () => {
  const index = await loadFixtureIndex();
  const fixture = index.cases.find((c) => c.id === 'qwen3-f32')!;
  const engine = createWebGpuEngine({
    models: [{ id: 'tiny', gguf: new URL(fixture.gguf, location.origin).href, contextLength: 1024 }],
  });
  handler = createResponsesHandler({ engine, store: createMemoryStore() });
});

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 12 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
};

async function post(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, any> }> {
  const response = await handler(
    new Request('http://local/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  );
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

function completedCalls(json: Record<string, any>): { name?: string; arguments?: string }[] {
  const calls = (json.output as { type: string; status?: string; name?: string; arguments?: string }[]).filter((o) => o.type === 'function_call');
  for (const c of calls.filter((c) => c.status !== 'completed')) expect(json.status).toBe('incomplete');
  return calls.filter((c) => c.status === 'completed');
}

/** An independent check of the tool's schema (no constraint code involved). */
function validWeatherArguments(text: string): boolean {
  const args = JSON.parse(text) as Record<string, unknown>;
  const keys = Object.keys(args).sort();
  return (
    keys.join(',') === 'city,unit' &&
    typeof args.city === 'string' &&
    // JSON Schema's maxLength counts characters (code points), not UTF-16 units: a sampled astral character is one.
    [...(args.city as string)].length <= 12 &&
    (args.unit === 'celsius' || args.unit === 'fahrenheit')
  );
}

for (const seed of [1, 2, 3]) {
  test(`tool_choice required gives a function_call whose arguments validate (seed ${seed})`, async () => {
    const { status, json } = await post({
      model: 'tiny',
      input: 'What is the weather in Paris?',
      tools: [weatherTool],
      tool_choice: 'required',
      reasoning: { effort: 'none' },
      temperature: 1,
      seed,
      max_output_tokens: 160,
    });
    expect(status, JSON.stringify(json)).toBe(200);
    // The first call must be complete; a further parallel call may be cut short by max_output_tokens (status
    // incomplete, with the response incomplete too), and only complete calls are held to the schema.
    const calls = completedCalls(json);
    expect(calls.length, JSON.stringify(json.output)).toBeGreaterThan(0);
    expect(json.output[0].status, JSON.stringify(json.output)).toBe('completed');
    for (const call of calls) {
      expect(call.name).toBe('get_weather');
      expect(validWeatherArguments(call.arguments!), call.arguments).toBe(true);
    }
  });
}

test('a named tool_choice fixes the tool', async () => {
  const other = { ...weatherTool, name: 'get_time', description: 'Time in a city' };
  const { status, json } = await post({
    model: 'tiny',
    input: 'Hello',
    tools: [other, weatherTool],
    tool_choice: { type: 'function', name: 'get_weather' },
    reasoning: { effort: 'none' },
    temperature: 0.8,
    seed: 5,
    max_output_tokens: 160,
  });
  expect(status, JSON.stringify(json)).toBe(200);
  const calls = completedCalls(json);
  expect(calls.length, JSON.stringify(json.output)).toBeGreaterThan(0);
  for (const c of calls) expect(c.name === 'get_weather' && validWeatherArguments(c.arguments!), JSON.stringify(c)).toBe(true);
});
