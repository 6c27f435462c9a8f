// The request's settings as the Response object echoes them, normalized the way the official API returns them
// (and the Open Responses schema requires): every field present, defaults filled in, null where not given.
// - tools: a function tool always carries `description`, `parameters` and `strict` (null where not given); a
//   custom tool its `format` (`{type:"text"}` by default); a namespace tool its functions normalized the same way;
//   hosted tools come back as sent.
// - tool_choice: `auto` by default; hosted-tool forms, which this runtime serves as `auto`, echo as `auto`.
// - text: `format` (`{type:"text"}` by default; a JSON schema one with `strict`) and `verbosity` when asked.
// - reasoning: `effort` and `summary` (null when not asked; `generate_summary`, the older name, counts as summary).
// - presence_penalty, frequency_penalty: this runtime applies neither, so both are 0 (the API's defaults).
import type { CreateResponseBody, ResponseObject, TextFormat, Tool, ToolChoice } from './schema.ts';

type EchoFields = Pick<ResponseObject, 'tools' | 'tool_choice' | 'text' | 'reasoning' | 'presence_penalty' | 'frequency_penalty' | 'usage'>;

/** The normalized echo of a request's tools, tool_choice, text and reasoning settings, and the fields the runtime fixes. */
export function echoedSettings(body: Pick<CreateResponseBody, 'tools' | 'tool_choice' | 'text' | 'reasoning'>): EchoFields {
  return {
    tools: (body.tools ?? []).map(echoTool),
    tool_choice: echoToolChoice(body.tool_choice),
    text: {
      format: echoFormat(body.text?.format),
      ...(body.text?.verbosity ? { verbosity: body.text.verbosity } : {}),
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

/** `auto` by default; a hosted-tool form (`{type:"file_search"}`, …) is served as `auto`, and says so. */
function echoToolChoice(choice: ToolChoice | null | undefined): ToolChoice {
  if (choice === null || choice === undefined) return 'auto';
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' || choice.type === 'custom' || choice.type === 'allowed_tools') return choice;
  return 'auto';
}

/**
 * `{type:"text"}` by default; a JSON schema format with `description` (null when not given) and `strict: true` unless
 * sent false (decoding enforces the schema).
 */
function echoFormat(format: TextFormat | undefined): TextFormat {
  if (format === undefined) return { type: 'text' };
  if (format.type === 'json_schema') return { ...format, description: format.description ?? null, strict: format.strict ?? true };
  return format;
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

/**
 * A response stored before these fields were normalized (an older version of this runtime wrote it to IndexedDB)
 * read back with them filled in the same way; a record that has them comes back unchanged.
 */
export function upgradeStoredResponse(stored: Record<string, unknown>): ResponseObject {
  const response = stored as unknown as ResponseObject;
  if ('presence_penalty' in stored && 'usage' in stored && stored.reasoning !== null) return response;
  const echo = echoedSettings({
    tools: response.tools,
    tool_choice: response.tool_choice,
    text: response.text as CreateResponseBody['text'],
    reasoning: (response.reasoning ?? null) as CreateResponseBody['reasoning'],
  });
  return { ...response, ...echo, usage: response.usage ?? null };
}
