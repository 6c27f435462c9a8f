// A named tool_choice for a member of a `namespace` tool (Codex's tools): the `openai` SDK types only
// `{type, name}` for a named choice, its call items `{name, namespace}`; the handler takes the choice spelled like
// the items (`namespace` beside `name`), the flat name the model sees, or a member's own name when one namespace
// alone holds it, and forces that member: the constraint names the qualified tool and the call comes back as
// `{name, namespace}`. Undeclared or ambiguous choices are 400s naming tool_choice.
import { describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../../src/responses/schema.ts';
import { post, setup } from './harness.ts';

const jsParameters = { type: 'object', properties: { code: { type: 'string' } }, required: ['code'], additionalProperties: false };
const tools = [
  { type: 'function', name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  {
    type: 'namespace',
    name: 'mcp__node_repl',
    description: 'A Node kernel.',
    tools: [
      { type: 'function', name: 'js', strict: false, parameters: jsParameters },
      { type: 'custom', name: 'patch', description: 'Apply a patch' },
    ],
  },
  { type: 'namespace', name: 'mcp__other', tools: [{ type: 'function', name: 'reset', parameters: { type: 'object', properties: {} } }] },
  { type: 'namespace', name: 'mcp__third', tools: [{ type: 'function', name: 'reset', parameters: { type: 'object', properties: {} } }] },
];
const jsCall = ['<tool_call>', '{"name": "mcp__node_repl__js", "arguments": {"code": "1+1"}}', '</tool_call>'];

async function forced(toolChoice: unknown, tokens: string[] = jsCall) {
  const { handler, engine } = setup([{ tokens }]);
  const response = await post(handler, '/responses', { input: 'Run it.', tools, tool_choice: toolChoice });
  return { response, engine };
}

describe('named tool_choice on a namespace member', () => {
  for (const [label, choice] of [
    ['{type, name, namespace} (as the call items spell it)', { type: 'function', name: 'js', namespace: 'mcp__node_repl' }],
    ['the flat name the model sees', { type: 'function', name: 'mcp__node_repl__js' }],
    ["the member's own name, held by one namespace", { type: 'function', name: 'js' }],
  ] as const) {
    it(`${label}: the constraint forces the qualified member, the call comes back as {name, namespace}`, async () => {
      const { response, engine } = await forced(choice);
      expect(response.status).toBe(200);
      expect(engine.requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'named', name: 'mcp__node_repl__js' });
      const final = (await response.json()) as ResponseObject;
      expect(final.status).toBe('completed');
      expect(final.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'js', namespace: 'mcp__node_repl', arguments: '{"code": "1+1"}' })]);
      // The choice is echoed as sent.
      expect(final.tool_choice).toEqual(choice);
    });
  }

  it('a custom member is forced with type custom', async () => {
    const { response, engine } = await forced({ type: 'custom', name: 'patch', namespace: 'mcp__node_repl' }, [
      '<tool_call>',
      '{"name": "mcp__node_repl__patch", "arguments": {"input": "*** Begin Patch"}}',
      '</tool_call>',
    ]);
    expect(response.status).toBe(200);
    expect(engine.requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'named', name: 'mcp__node_repl__patch' });
    const final = (await response.json()) as ResponseObject;
    expect(final.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'patch', namespace: 'mcp__node_repl', input: '*** Begin Patch' })]);
  });

  it('a plain tool is still forced by its name, with or without the default namespace', async () => {
    for (const choice of [{ type: 'function', name: 'read_file' }, { type: 'function', name: 'read_file', namespace: 'functions' }]) {
      const { response, engine } = await forced(choice, ['<tool_call>', '{"name": "read_file", "arguments": {"path": "a"}}', '</tool_call>']);
      expect(response.status).toBe(200);
      expect(engine.requests[0]!.constraint).toMatchObject({ mode: 'named', name: 'read_file' });
    }
  });

  for (const [label, choice, message] of [
    ['a member of another kind', { type: 'custom', name: 'js', namespace: 'mcp__node_repl' }, /not declared/],
    ['a namespace that does not hold it', { type: 'function', name: 'js', namespace: 'mcp__other' }, /not declared/],
    ['an unknown namespace', { type: 'function', name: 'js', namespace: 'nope' }, /not declared/],
    ['an own name two namespaces hold', { type: 'function', name: 'reset' }, /several namespaces.*mcp__other, mcp__third/],
  ] as const) {
    it(`${label}: 400 naming tool_choice`, async () => {
      const { response, engine } = await forced(choice);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { param: string; message: string } };
      expect(body.error.param).toBe('tool_choice');
      expect(body.error.message).toMatch(message);
      expect(engine.requests).toHaveLength(0);
    });
  }

  it('an own name two namespaces hold is forced once its namespace is named', async () => {
    const { response, engine } = await forced({ type: 'function', name: 'reset', namespace: 'mcp__third' }, [
      '<tool_call>',
      '{"name": "mcp__third__reset", "arguments": {}}',
      '</tool_call>',
    ]);
    expect(response.status).toBe(200);
    expect(engine.requests[0]!.constraint).toMatchObject({ mode: 'named', name: 'mcp__third__reset' });
    const final = (await response.json()) as ResponseObject;
    expect(final.output[0]).toMatchObject({ type: 'function_call', name: 'reset', namespace: 'mcp__third' });
  });
});
