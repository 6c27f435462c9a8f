// Translation of Responses input items into the model's chat: ONE normaliser that every item goes through
// (a client's own items and a stored history replayed by previous_response_id alike), then the chat builder.
//
// normaliseItems: opens sealed state (encrypted reasoning, compaction), drops the wire-only fields (`id`,
//   `status`) and rejects content this text-only runtime cannot take, so that a history replayed by id and the
//   same items resent by hand are the same list.
// buildChat: instructions as this request's system message only; developer blocks kept in place with the
//   `Developer instructions:` label; reasoning and tool calls folded into the assistant turn they belong to;
//   tool outputs matched to their call by call_id; custom tools shimmed to a function with one `input: string`.
import type { ChatMessage, ChatTool, ChatToolCall, ConstrainedTool, ConstraintSpec } from '../engine/types.ts';
import { badRequest, quote } from './errors.ts';
import type { ReasoningSealer } from './reasoning-seal.ts';
import { qualifiedName, type NamespacedName } from './tool-namespaces.ts';
import {
  InputItem,
  type CreateResponseBody,
  type CustomTool,
  type FunctionTool,
  type MessageContentPart,
  type NamespaceTool,
  type Tool,
  type ToolChoice,
} from './schema.ts';
import { z } from 'zod';

/** A normalised item and where it came from (`input[3]`, `history[5]`), for error messages. */
export interface SourcedItem {
  item: InputItem;
  origin: string;
}

export interface Sealers {
  reasoning: ReasoningSealer;
  compaction: ReasoningSealer;
  /** Resolves `item_reference` items through the store (item-references.ts); absent: references are refused. */
  items?: ItemResolver;
}

export interface ItemResolver {
  /** The stored item with this id, schema-checked; throws the DomainError for an unknown or unresolvable id. */
  resolve(id: string, where: string): Promise<InputItem>;
}

export const DEVELOPER_LABEL = 'Developer instructions:';
/** Compactions nest at most this deep (a compaction of a history that held a compaction). */
const MAX_COMPACTION_DEPTH = 8;

/** The one normaliser. `items` are schema-valid input items; `origin(i)` names item i for errors. */
export async function normaliseItems(
  items: readonly InputItem[],
  origin: (index: number) => string,
  sealers: Sealers,
  depth = 0,
): Promise<SourcedItem[]> {
  const out: SourcedItem[] = [];
  for (const [index, item] of items.entries()) {
    const where = origin(index);
    switch (item.type) {
      case 'message': {
        const content = typeof item.content === 'string' ? item.content : item.content.map((part, j) => textOfPart(part, `${where}.content[${j}]`));
        const normal: InputItem = { type: 'message', role: item.role, content: typeof content === 'string' ? content : content.join('') };
        if (item.role === 'assistant' && item.phase) normal.phase = item.phase;
        out.push({ item: normal, origin: where });
        break;
      }
      case 'function_call':
        out.push({
          item: { type: 'function_call', call_id: item.call_id, name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}), arguments: item.arguments },
          origin: where,
        });
        break;
      case 'custom_tool_call':
        out.push({
          item: { type: 'custom_tool_call', call_id: item.call_id, name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}), input: item.input },
          origin: where,
        });
        break;
      case 'additional_tools':
        // Its tools joined the request's (schema.ts); it adds nothing to the chat and is not kept in the history.
        break;
      case 'item_reference': {
        if (!sealers.items) throw badRequest(`Item references are not resolved here ('${where}'): send the item itself.`, where);
        if (depth >= MAX_COMPACTION_DEPTH) throw badRequest(`Item reference in '${where}' is nested too deeply.`, where);
        const referenced = await sealers.items.resolve(item.id, where);
        out.push(...(await normaliseItems([referenced], () => where, sealers, depth + 1)));
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const output =
          typeof item.output === 'string' ? item.output : item.output.map((part, j) => textOfPart(part, `${where}.output[${j}]`)).join('');
        out.push({ item: { type: item.type, call_id: item.call_id, output }, origin: where });
        break;
      }
      case 'reasoning': {
        let text = (item.content ?? []).map((part) => part.text).join('\n');
        if (text === '') text = item.summary.map((part) => part.text).join('\n\n');
        if (text === '' && item.encrypted_content) {
          text = await sealers.reasoning.open(item.encrypted_content, `${where}.encrypted_content`);
        }
        out.push({ item: { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text }] }, origin: where });
        break;
      }
      case 'code_interpreter_call': {
        // Its code and the logs it printed (the wire-only id, container and status dropped).
        const logs = (item.outputs ?? []).filter((o) => o.type === 'logs').map((o) => ({ type: 'logs', logs: o.logs ?? '' }));
        out.push({ item: { type: 'code_interpreter_call', code: item.code ?? '', ...(logs.length > 0 ? { outputs: logs } : {}) }, origin: where });
        break;
      }
      case 'compaction': {
        if (depth >= MAX_COMPACTION_DEPTH) throw badRequest(`Compaction in '${where}' is nested too deeply.`, where);
        const sealed = await sealers.compaction.open(item.encrypted_content, `${where}.encrypted_content`);
        const inner = parseCompactionPayload(sealed, `${where}.encrypted_content`);
        out.push(...(await normaliseItems(inner, (j) => `${where}[${j}]`, sealers, depth + 1)));
        break;
      }
    }
  }
  return out;
}

function textOfPart(part: MessageContentPart, where: string): string {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return part.text;
    case 'refusal':
      return part.refusal;
    default:
      throw badRequest(`Content of type '${part.type}' in '${where}' is not supported: this runtime serves text-only models.`, where);
  }
}

// ---------------------------------------------------------------- compaction payload

const CompactionPayload = z.object({ v: z.literal(1), items: z.array(InputItem) });

export function compactionPayload(items: readonly InputItem[]): string {
  return JSON.stringify({ v: 1, items });
}

function parseCompactionPayload(json: string, where: string): InputItem[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw badRequest(`The compaction in '${where}' does not hold a history.`, where);
  }
  const parsed = CompactionPayload.safeParse(value);
  if (!parsed.success) throw badRequest(`The compaction in '${where}' does not hold a history.`, where);
  return parsed.data.items;
}

// ---------------------------------------------------------------- tools

export interface ServedTools {
  /** Tools as the chat template sees them (custom tools shimmed). */
  chatTools: ChatTool[];
  constrained: ConstrainedTool[];
  /** Names of custom tools, so the output parser can decode their calls back into custom_tool_call. */
  customNames: Set<string>;
  /** Qualified names of namespace members -> the namespace and name their calls come back under. */
  namespaced: Map<string, NamespacedName>;
}

export const CUSTOM_TOOL_PARAMETERS = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The raw input for the tool.' } },
  required: ['input'],
  additionalProperties: false,
} as const;

export function customToolDescription(tool: CustomTool): string {
  const parts: string[] = [];
  if (tool.description) parts.push(tool.description);
  parts.push('Call this tool with one argument, `input`: the raw text input for the tool (not JSON unless the tool asks for JSON).');
  if (tool.format?.type === 'grammar') {
    parts.push(`The input must match this ${tool.format.syntax === 'lark' ? 'Lark grammar' : 'regular expression'}:\n${tool.format.definition}`);
  }
  return parts.join('\n\n');
}

/**
 * The function and custom tools this request offers the model, filtered by tool_choice; a namespace tool's
 * members under their qualified names (tool-namespaces.ts). A name offered twice is offered once (the first).
 */
export function serveTools(tools: readonly Tool[], toolChoice: ToolChoice): ServedTools {
  const served: ServedTools = { chatTools: [], constrained: [], customNames: new Set(), namespaced: new Map() };
  if (toolChoice === 'none') return served;
  const allowed =
    typeof toolChoice === 'object' && toolChoice.type === 'allowed_tools' && 'tools' in toolChoice && Array.isArray(toolChoice.tools)
      ? new Set((toolChoice.tools as Record<string, unknown>[]).map((t) => t.name).filter((n): n is string => typeof n === 'string'))
      : null;
  const offered = new Set<string>();
  const offer = (named: FunctionTool | CustomTool, name: string, extraDescription: string | null): void => {
    if (offered.has(name)) return;
    offered.add(name);
    if (named.type === 'function') {
      const parameters = named.parameters ?? { type: 'object', properties: {} };
      const description = [extraDescription, named.description].filter((d): d is string => !!d).join('\n\n');
      served.chatTools.push({ type: 'function', function: { name, ...(description ? { description } : {}), parameters } });
      served.constrained.push({ type: 'function', name, parameters: named.parameters ?? null, strict: named.strict ?? false });
    } else {
      const description = [extraDescription, customToolDescription(named)].filter((d): d is string => !!d).join('\n\n');
      served.chatTools.push({
        type: 'function',
        function: { name, description, parameters: structuredClone(CUSTOM_TOOL_PARAMETERS) as Record<string, unknown> },
      });
      served.constrained.push({
        type: 'custom',
        name,
        ...(named.format?.type === 'grammar' ? { grammar: { syntax: named.format.syntax, definition: named.format.definition } } : {}),
      });
      served.customNames.add(name);
    }
  };
  for (const tool of tools) {
    if (tool.type === 'function' || tool.type === 'custom') {
      const named = tool as FunctionTool | CustomTool;
      if (allowed && !allowed.has(named.name)) continue;
      offer(named, named.name, null);
    } else if (tool.type === 'namespace') {
      const group = tool as NamespaceTool;
      // The namespace's description goes with its first member (the template has no place for the group).
      let groupDescription: string | null = group.description ? `${group.name}: ${group.description}` : null;
      for (const member of group.tools) {
        const name = qualifiedName(group.name, member.name);
        if (allowed && !allowed.has(name) && !allowed.has(member.name)) continue;
        if (name !== member.name) served.namespaced.set(name, { namespace: group.name, name: member.name });
        offer(member as FunctionTool | CustomTool, name, groupDescription);
        groupDescription = null;
      }
    }
  }
  return served;
}

/** The `tools` constraint, with the most calls the turn may make (`maxCalls`). */
type LimitedToolsConstraint = Extract<ConstraintSpec, { kind: 'tools' }>;

/** The most tool calls this turn may make: 1 with `parallel_tool_calls: false`, at most `max_tool_calls`. */
export function toolCallLimit(body: Partial<Pick<CreateResponseBody, 'parallel_tool_calls' | 'max_tool_calls'>>): number {
  return Math.min(body.parallel_tool_calls === false ? 1 : Infinity, body.max_tool_calls ?? Infinity);
}

/**
 * What decoding is held to. A forced tool call (required / named) wins; otherwise a JSON text format; otherwise,
 * whenever tools are on offer, `tools` in `auto` mode: free text, but a call the model starts names a declared
 * tool (strict or not: the name is always held). When a tool asks for a guarantee (a `strict` function, a custom
 * tool with a grammar) or the turn's calls are limited (`maxCalls` finite: parallel_tool_calls false,
 * max_tool_calls), calls also follow their schema/grammar (a non-strict schema where it compiles) and stop at the
 * limit; otherwise only the name and a JSON-object `arguments` are held. Without tools, nothing.
 */
export function constraintFor(served: ServedTools, toolChoice: ToolChoice, text: CreateResponseBody['text'], maxCalls = Infinity): ConstraintSpec {
  let mode: 'auto' | 'required' | 'named' = 'auto';
  let name: string | undefined;
  if (toolChoice === 'required') mode = 'required';
  else if (typeof toolChoice === 'object' && (toolChoice.type === 'function' || toolChoice.type === 'custom') && 'name' in toolChoice) {
    mode = 'named';
    name = String(toolChoice.name);
  } else if (typeof toolChoice === 'object' && toolChoice.type === 'allowed_tools' && 'mode' in toolChoice && toolChoice.mode === 'required') {
    mode = 'required';
  }
  const tools = served.constrained;
  const limit = maxCalls === Infinity ? {} : { maxCalls };
  if (tools.length > 0 && mode !== 'auto') {
    const forced: LimitedToolsConstraint = { kind: 'tools', mode, ...(name ? { name } : {}), tools, ...limit };
    return forced;
  }
  const format = text?.format;
  if (format?.type === 'json_schema') return { kind: 'json_schema', schema: format.schema };
  if (format?.type === 'json_object') return { kind: 'json_schema', schema: null };
  if (tools.length === 0) return { kind: 'none' };
  // When no tool asks for a guarantee and the calls are not limited, the constraint holds only the names (and
  // that arguments are a JSON object): holding every non-strict schema too would cost a compile per tool set
  // (~2 s for 20 tools with nested schemas on this machine) and could refuse a large set with a 400.
  const guaranteed = tools.some((t) => (t.type === 'function' ? t.strict : t.grammar !== undefined));
  const held = guaranteed || maxCalls !== Infinity ? tools : tools.map((t) => (t.type === 'function' ? { ...t, parameters: null } : t));
  const auto: LimitedToolsConstraint = { kind: 'tools', mode: 'auto', tools: held, ...limit };
  return auto;
}

// ---------------------------------------------------------------- chat

/** The chat messages for a normalised history; `instructions` (this request's only) lead as the system message. */
export function buildChat(items: readonly SourcedItem[], instructions: string | null | undefined): ChatMessage[] {
  const chat = new ChatBuilder();
  if (instructions) chat.messages.push({ role: 'system', content: instructions });
  for (const { item, origin } of items) chat.add(item, origin);
  chat.flush();
  return chat.messages;
}

/** The messages so far, the calls by id (their results name them), and the assistant turn being built. */
class ChatBuilder {
  readonly messages: ChatMessage[] = [];
  private readonly calls = new Map<string, string>();
  /** The assistant turn being built. */
  private turn: ChatMessage | null = null;
  /** Reasoning waiting for the turn it belongs to. */
  private reasoning: string | null = null;

  add(item: SourcedItem['item'], origin: string): void {
    switch (item.type) {
      case 'message': {
        const content = typeof item.content === 'string' ? item.content : '';
        if (item.role === 'assistant') {
          if (this.turn !== null && (this.turn.content !== '' || this.turn.tool_calls)) this.flush();
          const turn = this.assistantTurn();
          turn.content = content;
          if (item.phase) turn.phase = item.phase;
        } else {
          this.flush();
          this.messages.push(item.role === 'developer' ? { role: 'system', content: `${DEVELOPER_LABEL}\n${content}` } : { role: item.role, content });
        }
        break;
      }
      case 'reasoning': {
        if (this.turn !== null) this.flush();
        const text = (item.content ?? []).map((p) => p.text).join('\n');
        this.reasoning = this.reasoning === null ? text : `${this.reasoning}\n${text}`;
        break;
      }
      case 'function_call':
        this.addCall({ id: item.call_id, type: 'function', function: { name: qualifiedName(item.namespace, item.name), arguments: parseArguments(item.arguments) } });
        break;
      case 'custom_tool_call':
        this.addCall({ id: item.call_id, type: 'function', function: { name: qualifiedName(item.namespace, item.name), arguments: { input: item.input } } });
        break;
      case 'code_interpreter_call':
        this.addCodeCall(item.code ?? '', (item.outputs ?? []).map((o) => o.logs ?? '').join(''));
        break;
      case 'additional_tools':
        break;
      case 'item_reference':
        // normaliseItems has resolved every reference.
        throw new Error('buildChat got an unresolved item reference');
      case 'function_call_output':
      case 'custom_tool_call_output': {
        this.flush();
        const name = this.calls.get(item.call_id);
        if (name === undefined) {
          throw badRequest(`No tool call found for call_id '${quote(item.call_id)}' in '${origin}'.`, `${origin}.call_id`);
        }
        this.messages.push({ role: 'tool', content: typeof item.output === 'string' ? item.output : '', tool_call_id: item.call_id, name });
        break;
      }
      case 'compaction':
        // normaliseItems has expanded every compaction; a raw one here is a programming error upstream.
        throw new Error('buildChat got an unexpanded compaction item');
    }
  }

  /** Ends the assistant turn being built (a turn of reasoning alone too). */
  flush(): void {
    if (this.turn === null && this.reasoning !== null) this.turn = { role: 'assistant', content: '', reasoning_content: this.reasoning };
    if (this.turn !== null) this.messages.push(this.turn);
    this.turn = null;
    this.reasoning = null;
  }

  private assistantTurn(): ChatMessage {
    if (this.turn === null) {
      this.turn = { role: 'assistant', content: '' };
      if (this.reasoning !== null) this.turn.reasoning_content = this.reasoning;
      this.reasoning = null;
    }
    return this.turn;
  }

  private addCall(call: ChatToolCall): void {
    const current = this.assistantTurn();
    (current.tool_calls ??= []).push(call);
    this.calls.set(call.id, call.function.name);
  }

  /**
   * Code sent to Harmony's `python` tool: a call of `python` whose arguments are the code (the Harmony renderer
   * writes it back as `to=python`), what it printed that call's result.
   */
  private addCodeCall(code: string, logs: string): void {
    const id = `python_${this.calls.size}`;
    this.addCall({ id, type: 'function', function: { name: 'python', arguments: code } });
    if (logs) {
      this.flush();
      this.messages.push({ role: 'tool', content: logs, tool_call_id: id, name: 'python' });
    }
  }
}

function parseArguments(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Arguments that are not a JSON object go to the template as the model wrote them.
  }
  return text;
}
