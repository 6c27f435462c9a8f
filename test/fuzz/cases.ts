// The requests the fuzz suite sends (fast-check arbitraries), by category: well-formed create bodies with every
// field the wire contract has, the same bodies with one field replaced, deleted or made huge, JSON nested past the
// bound, hostile headers (another origin, form content types), every route with good and malformed ids, client-
// carried encrypted reasoning (intact, tampered, empty, garbage), bodies that are not JSON objects, and engine
// faults. Each case also carries the fake engine's script for it: model output drawn from fragments that make
// real and broken reasoning blocks and tool calls.
//
// Placeholders filled in when the case runs (runner.ts), so that requests refer to state earlier ones made:
// `$PREV` a stored response id, `$BLOB` an `encrypted_content` the server sealed, `$TAMPERED` that blob altered,
// `"$DEEP"` (a JSON string) a value nested `deepLevels` deep.
import fc from 'fast-check';
import type { FakeScript } from '../support/fake-engine.ts';

export type Category = 'valid' | 'mutated' | 'deep' | 'headers' | 'routes' | 'encrypted' | 'not-an-object' | 'engine-fault';

export interface FuzzCase {
  category: Category;
  method: string;
  /** After `/v1/`. */
  path: string;
  headers: Record<string, string>;
  /** The body text (JSON mostly), or bytes without a type. */
  body?: string;
  /** The fake engine's script for the generation this request may start. */
  script: FakeScript;
  /** The script throws an engine fault: a 5xx (non-streamed) or `response.failed` is the right answer. */
  fault: boolean;
  /** The request comes from another site: it must be refused with 403 and generate nothing. */
  crossSite: boolean;
  /** How deep `"$DEEP"` nests. */
  deepLevels: number;
  /** Picks among the known ids and blobs when placeholders are filled. */
  pick: number;
}

// ---------------------------------------------------------------- model output

const FRAGMENTS = [
  'Hello', ' world', '.', '\n', ' ', 'The answer is 4.', '<think>', '</think>', 'thinking about it', '<tool_call>', '</tool_call>',
  '{"name": "get_weather", "arguments": {"city": "Paris"}}', '{"name": "', 'get_weather', 'apply_patch', '", "arguments": ', '{"city": "Par',
  'is"}', '}', '{', '"', '\\', '\\uZZZZ', '{"name": "\\uZZZZ", "arguments": {}}', '{"name": 5}', '{"name": "nope", "arguments": {}}',
  '{"name": "add", "arguments": "not json"}', '{"name":"add","arguments":{"a":1,"b":2}}', '*** Begin Patch\n', '*** End Patch',
  '\u00e9', '\ud83d', '\ude00', '\ud83d\ude00', '\u0000', '</s>', '<|im_end|>', '[', ']',
];

const modelOutput: fc.Arbitrary<string[]> = fc.array(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...FRAGMENTS) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }), {
  maxLength: 10,
});

const script = (fault: boolean): fc.Arbitrary<FakeScript> =>
  fc.tuple(modelOutput, fc.nat({ max: 10 }), fc.boolean()).map(([tokens, at, prefill]) => {
    const out: FakeScript = { tokens: fault && tokens.length === 0 ? ['x'] : tokens, prefillSteps: prefill ? 2 : 0 };
    if (fault) out.failAt = at % out.tokens.length;
    return out;
  });

// ---------------------------------------------------------------- request bodies

const shortText = fc.string({ maxLength: 24 });
const anyText = fc.oneof({ weight: 4, arbitrary: shortText }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) });
const toolName = fc.oneof({ weight: 5, arbitrary: fc.constantFrom('get_weather', 'add', 'apply_patch', 'lookup') }, { weight: 1, arbitrary: shortText });

const SCHEMAS: unknown[] = [
  { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
  { type: 'array', items: { type: 'integer', minimum: 0 } },
  { type: 'string', enum: ['x', 'y'] },
  { type: 'object', properties: { n: { anyOf: [{ type: 'string' }, { type: 'null' }] } } },
  { type: 'weird' },
  { $ref: '#/$defs/a', $defs: { a: { type: 'string', pattern: '^[a-z]+$' } } },
  {},
];
const schema: fc.Arbitrary<unknown> = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...SCHEMAS) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

const functionTool = fc.record(
  { type: fc.constant('function'), name: toolName, description: shortText, parameters: schema, strict: fc.boolean() },
  { requiredKeys: ['type', 'name'] },
);
const customTool = fc.record(
  {
    type: fc.constant('custom'),
    name: toolName,
    description: shortText,
    format: fc.oneof(
      fc.constant({ type: 'text' }),
      fc.record({ type: fc.constant('grammar'), syntax: fc.constant('regex'), definition: fc.constantFrom('[a-z]+', '\\d{1,3}', '(', 'a|b', '.*') }),
      fc.record({ type: fc.constant('grammar'), syntax: fc.constant('lark'), definition: fc.constantFrom('start: "a"+', 'start: WORD\n%import common.WORD', 'nonsense') }),
    ),
  },
  { requiredKeys: ['type', 'name'] },
);
const tool = fc.oneof({ weight: 5, arbitrary: functionTool }, { weight: 2, arbitrary: customTool }, { weight: 1, arbitrary: fc.constantFrom({ type: 'web_search' }, { type: 'file_search' }) });

const toolChoice = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('auto', 'none', 'required') },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('function', 'custom'), name: toolName }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('allowed_tools'), mode: fc.constantFrom('auto', 'required'), tools: fc.array(fc.record({ type: fc.constant('function'), name: toolName }), { maxLength: 2 }) }) },
);

const textFormat = fc.oneof(
  fc.constant({ format: { type: 'text' } }),
  fc.constant({ format: { type: 'json_object' } }),
  fc.record({ format: fc.record({ type: fc.constant('json_schema'), name: fc.constantFrom('answer', 's'), schema, strict: fc.boolean() }, { requiredKeys: ['type', 'name', 'schema'] }) }),
);

const encrypted = fc.constantFrom('$BLOB', '$BLOB', '$TAMPERED', '', 'not base64!', 'AAAA', 'AQ==');

const inputItem = fc.oneof(
  { weight: 6, arbitrary: fc.record({ role: fc.constantFrom('user', 'assistant', 'system', 'developer'), content: anyText }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('message'),
      role: fc.constantFrom('user', 'assistant'),
      content: fc.array(fc.record({ type: fc.constantFrom('input_text', 'output_text'), text: anyText }), { maxLength: 2 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('function_call'), call_id: fc.constantFrom('c1', 'c2'), name: toolName, arguments: fc.oneof(fc.constant('{"city":"Paris"}'), shortText) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('function_call_output'), call_id: fc.constantFrom('c1', 'c2', 'c3'), output: anyText }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('custom_tool_call'), call_id: fc.constantFrom('c1', 'c4'), name: toolName, input: shortText }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('custom_tool_call_output'), call_id: fc.constantFrom('c4'), output: shortText }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { type: fc.constant('reasoning'), id: fc.constant('rs_1'), summary: fc.constant([]), content: fc.array(fc.record({ type: fc.constant('reasoning_text'), text: shortText }), { maxLength: 1 }), encrypted_content: encrypted },
      { requiredKeys: ['type', 'summary'] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'item_reference', id: 'msg_1' }, { type: 'web_search_call', id: 'ws_1' }, { type: 'image' }) },
);

const bodyFields = {
  model: fc.oneof({ weight: 12, arbitrary: fc.constantFrom('fake', 'fake-qwen3') }, { weight: 1, arbitrary: fc.constantFrom('', 'gpt-nope', null) }),
  input: fc.oneof(anyText, fc.array(inputItem, { minLength: 1, maxLength: 5 })),
  instructions: anyText,
  tools: fc.array(tool, { maxLength: 3 }),
  tool_choice: toolChoice,
  text: textFormat,
  stream: fc.boolean(),
  store: fc.boolean(),
  background: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  max_output_tokens: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 1, max: 40 }) }, { weight: 1, arbitrary: fc.constantFrom(0, -1, 1e12) }),
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  top_p: fc.double({ min: 0, max: 1, noNaN: true }),
  seed: fc.integer(),
  include: fc.oneof({ weight: 12, arbitrary: fc.constantFrom(['reasoning.encrypted_content'], []) }, { weight: 1, arbitrary: fc.constant(['nope']) }),
  truncation: fc.constantFrom('auto', 'disabled'),
  metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 16 }), { maxKeys: 3 }),
  parallel_tool_calls: fc.boolean(),
  max_tool_calls: fc.integer({ min: 0, max: 3 }),
  previous_response_id: fc.oneof({ weight: 8, arbitrary: fc.constant('$PREV') }, { weight: 1, arbitrary: fc.constantFrom('resp_nope', 'nope') }),
  reasoning: fc.record({ effort: fc.constantFrom('none', 'low', 'medium', 'high') }),
  user: shortText,
};

/** A create body: input nearly always, each other field sometimes. */
const createBody: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(fc.record(bodyFields, { requiredKeys: [] }), fc.nat({ max: 19 }))
  .map(([body, dice]) => {
    const out: Record<string, unknown> = { ...body };
    if (dice === 0) delete out.input;
    else if (out.input === undefined) out.input = 'Hi';
    // Fields that refer to other state or other fields: present in a fifth of the bodies.
    if (dice % 5 !== 1) delete out.tool_choice;
    if (dice % 5 !== 2 && dice !== 0) delete out.previous_response_id;
    if (dice % 4 !== 3) delete out.background;
    // Background runs are rare and short (each is polled to its end before the next case).
    if (out.background === true) out.max_output_tokens = 3;
    return out;
  });

/** Every path in a value (keys and indices), iteratively. */
function pathsOf(value: unknown): (string | number)[][] {
  const out: (string | number)[][] = [];
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (path.length > 0) out.push(path);
    if (typeof v === 'object' && v !== null) {
      for (const [key, child] of Object.entries(v)) stack.push({ value: child, path: [...path, Array.isArray(v) ? Number(key) : key] });
    }
  }
  return out;
}

function setAt(root: Record<string, unknown>, path: (string | number)[], value: unknown, remove: boolean): void {
  let at: any = root;
  for (const key of path.slice(0, -1)) at = at[key];
  const last = path[path.length - 1]!;
  if (remove) {
    if (Array.isArray(at)) at.splice(last as number, 1);
    else delete at[last];
  } else at[last] = value;
}

const mutation = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: 'set' as const, value })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'delete' as const, value: null }) },
  { weight: 1, arbitrary: fc.constantFrom(200_000, 1_100_000).map((n) => ({ kind: 'set' as const, value: 'm'.repeat(n) })) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 1e308, -0, 2 ** 53 + 1, '', null, true, [], {}).map((value) => ({ kind: 'set' as const, value })) },
);

function mutate(body: Record<string, unknown>, choice: number, change: { kind: 'set' | 'delete'; value: unknown }, extraKey: string | null): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
  if (extraKey !== null) {
    copy[extraKey] = change.value;
    return copy;
  }
  const paths = pathsOf(copy);
  if (paths.length === 0) return copy;
  setAt(copy, paths[choice % paths.length]!, change.value, change.kind === 'delete');
  return copy;
}

// ---------------------------------------------------------------- cases

const json = { 'content-type': 'application/json' };
const base = { headers: json, fault: false, crossSite: false, deepLevels: 0, pick: 0 };

const createPath = fc.oneof({ weight: 8, arbitrary: fc.constant('responses') }, { weight: 1, arbitrary: fc.constantFrom('responses/input_tokens', 'responses/compact') });

const valid: fc.Arbitrary<FuzzCase> = fc.tuple(createBody, createPath, script(false), fc.nat()).map(([body, path, s, pick]) => ({
  ...base,
  category: 'valid',
  method: 'POST',
  path,
  body: JSON.stringify(body),
  script: s,
  pick,
}));

const mutated: fc.Arbitrary<FuzzCase> = fc
  .tuple(createBody, fc.nat(), mutation, fc.option(fc.constantFrom('unknown_field', 'service_tier', 'stream_options', 'prompt_cache_key', '__proto__'), { freq: 4 }), script(false), fc.nat())
  .map(([body, choice, change, extra, s, pick]) => ({
    ...base,
    category: 'mutated',
    method: 'POST',
    path: 'responses',
    body: JSON.stringify(mutate(body, choice, change, extra)),
    script: s,
    pick,
  }));

const deep: fc.Arbitrary<FuzzCase> = fc
  .tuple(createBody, fc.nat(), fc.constantFrom(65, 66, 200, 3_000, 100_000), fc.constantFrom('tools', 'text', 'tool_choice', 'input', 'any'), script(false))
  .map(([body, choice, levels, where, s]) => {
    const copy: Record<string, unknown> = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
    if (where === 'tools') copy.tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { a: '$DEEP' } } }];
    else if (where === 'text') copy.text = { format: { type: 'json_schema', name: 's', schema: { type: 'array', items: '$DEEP' } } };
    else if (where === 'tool_choice') copy.tool_choice = { type: 'function', name: '$DEEP' };
    else if (where === 'input') copy.input = [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', extra: '$DEEP' }];
    else {
      const paths = pathsOf(copy);
      if (paths.length > 0) setAt(copy, paths[choice % paths.length]!, '$DEEP', false);
    }
    return { ...base, category: 'deep' as const, method: 'POST', path: 'responses', body: JSON.stringify(copy), script: s, deepLevels: levels };
  });

const OWN = 'http://local';
const headers: fc.Arbitrary<FuzzCase> = fc
  .tuple(
    createBody,
    fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', null),
    fc.constantFrom(null, null, OWN, 'http://evil.example', 'null', 'http://local:8080', 'https://local'),
    fc.constantFrom(null, null, 'same-origin', 'cross-site', 'same-site', 'none'),
    fc.constantFrom('POST', 'POST', 'POST', 'PUT', 'PATCH', 'GET', 'DELETE', 'OPTIONS'),
    script(false),
  )
  .map(([body, type, origin, site, method, s]) => {
    const h: Record<string, string> = {};
    if (type !== null) h['content-type'] = type;
    if (origin !== null) h.origin = origin;
    if (site !== null) h['sec-fetch-site'] = site;
    const crossSite = (origin !== null && origin !== OWN) || ((site === 'cross-site' || site === 'same-site') && origin !== OWN);
    return { ...base, category: 'headers' as const, method, path: 'responses', headers: h, body: method === 'GET' ? undefined : JSON.stringify(body), script: s, crossSite };
  });

const idText = fc.oneof(
  { weight: 4, arbitrary: fc.constant('$PREV') },
  { weight: 2, arbitrary: fc.constantFrom('resp_%ZZ', '%', 'resp_%E0%A4%A', 'resp_%2F..%2F', 'resp_%00', 'resp_nope', 'resp_', 'abc', '..', 'resp_a%20b', 'resp_%F0%9F%98%80') },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_%.-]{0,30}$/) },
);
const routes: fc.Arbitrary<FuzzCase> = fc
  .tuple(
    idText,
    fc.constantFrom('', '/cancel', '/input_items', '/input_items?limit=2&order=asc', '/input_items?limit=500', '/input_items?after=msg_nope', '/input_items?order=sideways', '/nope'),
    fc.constantFrom('GET', 'GET', 'DELETE', 'POST', 'PUT'),
    fc.constantFrom(null, 'models', 'nope', 'responses/', '', 'models/x', 'responses/input_tokens'),
    fc.nat(),
  )
  .map(([id, tail, method, fixed, pick]) => ({
    ...base,
    category: 'routes' as const,
    method,
    path: fixed ?? `responses/${id}${tail}`,
    headers: {},
    script: { tokens: ['ok'] },
    pick,
  }));

const encryptedCase: fc.Arbitrary<FuzzCase> = fc
  .tuple(encrypted, fc.boolean(), fc.constantFrom('reasoning', 'compaction'), fc.boolean(), script(false), fc.nat())
  .map(([blob, withText, type, stream, s, pick]) => {
    const item =
      type === 'reasoning'
        ? { type: 'reasoning', summary: [], content: withText ? [{ type: 'reasoning_text', text: 'plan' }] : [], encrypted_content: blob }
        : { type: 'compaction', encrypted_content: blob };
    const body = { input: [{ role: 'user', content: 'x' }, item, { role: 'user', content: 'y' }], store: false, stream, include: ['reasoning.encrypted_content'] };
    return { ...base, category: 'encrypted' as const, method: 'POST', path: 'responses', body: JSON.stringify(body), script: s, pick };
  });

const notAnObject: fc.Arbitrary<FuzzCase> = fc
  .oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.constantFrom('', '{', '{"input":', '{"input":"x"', 'null', '[]', '{"input":"x"}garbage', '\ufeff{"input":"x"}', '{"input":"\\ud800"}'),
  )
  .chain((body) => fc.tuple(fc.constant(body), createPath, script(false)))
  .map(([body, path, s]) => ({ ...base, category: 'not-an-object' as const, method: 'POST', path, body, script: s }));

const engineFault: fc.Arbitrary<FuzzCase> = fc.tuple(createBody, script(true)).map(([body, s]) => ({
  ...base,
  category: 'engine-fault' as const,
  method: 'POST',
  path: 'responses',
  body: JSON.stringify({ ...body, input: 'Hi', previous_response_id: undefined }),
  script: s,
  fault: true,
}));

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  { weight: 30, arbitrary: valid },
  { weight: 25, arbitrary: mutated },
  { weight: 5, arbitrary: deep },
  { weight: 10, arbitrary: headers },
  { weight: 12, arbitrary: routes },
  { weight: 6, arbitrary: encryptedCase },
  { weight: 7, arbitrary: notAnObject },
  { weight: 5, arbitrary: engineFault },
);

/** `count` cases from `seed` (the same seed gives the same cases). */
export function sampleCases(seed: number, count: number): FuzzCase[] {
  return fc.sample(fuzzCase, { seed, numRuns: count });
}
