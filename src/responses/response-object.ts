// The request's settings as the Response object echoes them, normalized the way the official API returns them
// (and the Open Responses schema requires): every field present, defaults filled in, null where not given.
// - tools: a function tool always carries `description`, `parameters` and `strict` (null where not given); a
//   custom tool its `format` (`{type:"text"}` by default); a namespace tool its functions normalized the same way;
//   hosted tools come back as sent.
// - text: `format` (`{type:"text"}` by default) and `verbosity` (null when not asked).
// - reasoning: `effort` and `summary` (null when not asked; `generate_summary`, the older name, counts as summary).
// - presence_penalty, frequency_penalty: this runtime applies neither, so both are 0 (the API's defaults).
import type { CreateResponseBody, ResponseObject, Tool } from './schema.ts';

type EchoFields = Pick<ResponseObject, 'tools' | 'text' | 'reasoning' | 'presence_penalty' | 'frequency_penalty' | 'usage'>;

/** The normalized echo of a request's tools, text and reasoning settings, and the fields the runtime fixes. */
export function echoedSettings(body: Pick<CreateResponseBody, 'tools' | 'text' | 'reasoning'>): EchoFields {
  return {
    tools: (body.tools ?? []).map(echoTool),
    text: {
      format: body.text?.format ?? { type: 'text' },
      verbosity: body.text?.verbosity ?? null,
    },
    reasoning: {
      effort: body.reasoning?.effort ?? null,
      summary: body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null,
    },
    presence_penalty: 0,
    frequency_penalty: 0,
    usage: null,
  };
}

export function echoTool(tool: Tool): Tool {
  switch (tool.type) {
    case 'function':
      return {
        type: 'function',
        name: tool.name,
        description: tool.description ?? null,
        parameters: tool.parameters ?? null,
        strict: tool.strict ?? null,
      };
    case 'custom':
      return { ...tool, format: tool.format ?? { type: 'text' } };
    case 'namespace':
      return {
        type: 'namespace',
        name: tool.name,
        description: tool.description ?? null,
        tools: tool.tools.map((inner) =>
          inner.type === 'function'
            ? { type: 'function', name: inner.name, description: inner.description ?? null, parameters: inner.parameters ?? null, strict: inner.strict ?? null }
            : { ...inner, format: inner.format ?? { type: 'text' } },
        ),
      };
    default:
      return tool;
  }
}
