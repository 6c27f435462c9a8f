// Chat templates: render chat messages (with tools, tool calls, tool results and reasoning) to the prompt
// text through @huggingface/jinja, from tokenizer_config.json's `chat_template` or GGUF's
// `tokenizer.chat_template`. A template is code from the model file, so rendering is bounded (TEMPLATE_LIMITS):
// evaluation steps (every expression and every block, loop iterations included) and time, `range()` lengths, the size
// of any one string or list a step makes, and the total text blocks produce; going past one is a
// ChatTemplateLimitError, never an out-of-memory or a hang.

import { Environment, Interpreter, Template } from '@huggingface/jinja';
import type { ChatMessage, ChatTool } from '../common/chat.ts';
import { strftime } from '../common/strftime.ts';

export interface ChatTemplateInput {
  messages: ChatMessage[];
  tools?: ChatTool[];
  /** Open the assistant turn at the end (true for generation). */
  addGenerationPrompt?: boolean;
  /** Qwen3-style thinking switch; left undefined, templates use their default. */
  enableThinking?: boolean;
  bosToken?: string | null;
  eosToken?: string | null;
  /** Further variables some templates read (e.g. `date_string`). */
  extra?: Record<string, unknown>;
}

export interface TemplateLimits {
  /** Evaluation steps (expressions and blocks; each loop iteration is at least one). */
  maxSteps: number;
  /** Items one `range()` call may make. */
  maxRange: number;
  /** Characters of any one string value, the rendered prompt included. */
  maxStringChars: number;
  /** Items of any one list. */
  maxListItems: number;
  /** Characters all blocks produce together (nested output counts once per level). */
  maxTotalChars: number;
  /** Milliseconds one render may take. */
  maxMillis: number;
}

/** Generous for real templates (Qwen3's, 600 messages and 20 tools: 30k-100k steps, 48 KB, ~0.2 s). */
export const TEMPLATE_LIMITS: Readonly<TemplateLimits> = {
  maxSteps: 1_000_000,
  maxRange: 100_000,
  maxStringChars: 8 << 20,
  maxListItems: 1_000_000,
  maxTotalChars: 64 << 20,
  maxMillis: 3_000,
};

/** Longest template source parsed (real ones are under 100 KB). */
export const MAX_TEMPLATE_CHARS = 1 << 20;

/** A chat template ran past one of its limits (TEMPLATE_LIMITS). */
export class ChatTemplateLimitError extends Error {
  override readonly name = 'ChatTemplateLimitError';
}

/** A parsed chat template, ready to render many times. */
export class ChatTemplate {
  private readonly template: Template;

  constructor(
    readonly source: string,
    private readonly limits: Readonly<TemplateLimits> = TEMPLATE_LIMITS,
  ) {
    if (source.length > MAX_TEMPLATE_CHARS) {
      throw new ChatTemplateLimitError(`The chat template is ${source.length} characters, above the limit of ${MAX_TEMPLATE_CHARS}`);
    }
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new Error(`The chat template does not parse: ${(e as Error).message}`);
    }
  }

  /**
   * The template of a tokenizer_config.json `chat_template` value (a string, or named templates as an
   * array of {name, template} or a record): with tools, the "tool_use" one when present, else "default".
   */
  static select(field: string | Record<string, string> | { name: string; template: string }[] | null | undefined, withTools: boolean): ChatTemplate {
    if (field === null || field === undefined) throw new Error('The model has no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja, no tokenizer.chat_template in the GGUF)');
    if (typeof field === 'string') return new ChatTemplate(field);
    const named: Record<string, string> = Array.isArray(field) ? Object.fromEntries(field.map((t) => [t.name, t.template])) : field;
    const chosen = (withTools ? named.tool_use : undefined) ?? named.default ?? Object.values(named)[0];
    if (chosen === undefined) throw new Error('The model has an empty list of chat templates');
    return new ChatTemplate(chosen);
  }

  render(input: ChatTemplateInput): string {
    const context: Record<string, unknown> = {
      ...input.extra,
      messages: input.messages.map(toTemplateMessage),
      add_generation_prompt: input.addGenerationPrompt ?? true,
      bos_token: input.bosToken ?? '',
      eos_token: input.eosToken ?? '',
    };
    if (input.tools && input.tools.length) context.tools = input.tools;
    if (input.enableThinking !== undefined) context.enable_thinking = input.enableThinking;
    try {
      return renderBounded(this.template, context, this.limits);
    } catch (e) {
      if (e instanceof ChatTemplateLimitError) throw e;
      if (e instanceof RangeError) throw new ChatTemplateLimitError(`The chat template failed to render: ${e.message} (too deep or too large)`);
      const message = (e as Error).message;
      throw new Error(message.startsWith('The chat template') ? message : `The chat template failed to render: ${message}`);
    }
  }
}

/** Message as templates expect it: optional fields left out rather than undefined. */
function toTemplateMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.reasoning_content !== undefined) out.reasoning_content = m.reasoning_content;
  if (m.tool_calls && m.tool_calls.length) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  if (m.tools !== undefined) out.tools = m.tools;
  return out;
}

type RuntimeValue = { type: string; value: unknown };

/** What a filter gives on an undefined value in Jinja2 (its Undefined is empty: length 0, iterates nothing, prints ''). */
const UNDEFINED_FILTER_RESULTS: Record<string, unknown> = {
  length: 0,
  count: 0,
  list: [],
  join: '',
  string: '',
  trim: '',
  upper: '',
  lower: '',
  capitalize: '',
  title: '',
};
type Evaluate = (statement: unknown, environment: Environment) => RuntimeValue;

const limitFail = (what: string): never => {
  throw new ChatTemplateLimitError(`The chat template exceeded a limit: ${what}`);
};

/** The globals of @huggingface/jinja's setupGlobals (not exported), `range` bounded, then the context. */
function boundedEnvironment(context: Record<string, unknown>, limits: Readonly<TemplateLimits>): Environment {
  const env = new Environment();
  env.set('false', false);
  env.set('true', true);
  env.set('none', null);
  env.set('raise_exception', (message: unknown) => {
    throw new Error(String(message));
  });
  env.set('range', (start: number, stop?: number, step = 1) => {
    if (stop === undefined) [start, stop] = [0, start];
    if (typeof start !== 'number' || typeof stop !== 'number' || typeof step !== 'number') throw new Error('range() takes numbers');
    if (step === 0) throw new Error('range() step must not be zero');
    const length = Math.max(0, Math.ceil((stop - start) / step));
    if (length > limits.maxRange) limitFail(`range() of ${length} items (the limit is ${limits.maxRange})`);
    return Array.from({ length }, (_, i) => start + i * step);
  });
  env.set('strftime_now', (format: string) => strftime(new Date(), String(format)));
  env.set('True', true);
  env.set('False', false);
  env.set('None', null);
  for (const [key, value] of Object.entries(context)) env.set(key, value);
  return env;
}

/** A JS value as the interpreter's runtime value. */
function runtimeValue(value: unknown): RuntimeValue {
  const scope = new Environment();
  scope.set('value', value);
  return scope.lookupVariable('value') as unknown as RuntimeValue;
}

/**
 * Jinja2 (transformers) and llama.cpp semantics @huggingface/jinja lacks, before a node is evaluated: a filter on an
 * undefined value gives what Jinja2's Undefined gives (`tools | length` with no tools: 0), `bool | string` is
 * "True". Undefined when the library's own evaluation should go on. A for loop's iterable is marked in `iterables`
 * (an undefined one iterates as empty: `{% for c in m.tool_calls %}` on a message without calls).
 */
function jinja2Override(node: unknown, environment: Environment, evaluate: Evaluate, iterables: WeakSet<object>): RuntimeValue | undefined {
  const n = node as { type?: string; iterable?: { type?: string; lhs?: object } } | undefined;
  if (n?.type === 'For' && n.iterable) iterables.add(n.iterable.type === 'SelectExpression' && n.iterable.lhs ? n.iterable.lhs : n.iterable);
  if (n?.type !== 'FilterExpression') return undefined;
  const f = (n as unknown as { filter: { type: string; value?: string; callee?: { type: string; value?: string } } }).filter;
  const name = f.type === 'Identifier' ? f.value : f.type === 'CallExpression' && f.callee?.type === 'Identifier' ? f.callee.value : undefined;
  if (name === undefined || !Object.hasOwn(UNDEFINED_FILTER_RESULTS, name)) return undefined;
  const operand = evaluate((n as unknown as { operand: unknown }).operand, environment);
  if (operand.type === 'UndefinedValue') return runtimeValue(UNDEFINED_FILTER_RESULTS[name]);
  if (name === 'string' && operand.type === 'BooleanValue') return runtimeValue(operand.value ? 'True' : 'False');
  return undefined;
}

/**
 * Run `f` with booleans printing as Python prints them ("True"), as in transformers' Jinja2 and llama.cpp (a
 * template that writes a tool call's boolean argument with `{{ value }}`); @huggingface/jinja prints "true". The
 * library's BooleanValue is patched for the (synchronous) render only; `tojson` still writes true.
 */
function withPythonBooleans<T>(env: Environment, f: () => T): T {
  const booleanPrototype = Object.getPrototypeOf(env.lookupVariable('true')) as { toString(this: RuntimeValue): string };
  const ownToString = Object.hasOwn(booleanPrototype, 'toString') ? booleanPrototype.toString : undefined;
  booleanPrototype.toString = function (this: RuntimeValue) {
    return this.value ? 'True' : 'False';
  };
  try {
    return f();
  } finally {
    if (ownToString) booleanPrototype.toString = ownToString;
    else delete (booleanPrototype as { toString?: unknown }).toString;
  }
}

/** What Template.render does, with the globals' `range` bounded and every step of the interpreter counted. */
function renderBounded(template: Template, context: Record<string, unknown>, limits: Readonly<TemplateLimits>): string {
  const env = boundedEnvironment(context, limits);
  const interpreter = new Interpreter(env);
  const iterables = new WeakSet<object>();
  let steps = 0;
  let totalChars = 0;
  const check = (value: RuntimeValue): RuntimeValue => {
    if (value.type === 'StringValue' && (value.value as string).length > limits.maxStringChars) {
      limitFail(`a string of ${(value.value as string).length} characters (the limit is ${limits.maxStringChars})`);
    }
    if ((value.type === 'ArrayValue' || value.type === 'TupleValue') && (value.value as unknown[]).length > limits.maxListItems) {
      limitFail(`a list of ${(value.value as unknown[]).length} items (the limit is ${limits.maxListItems})`);
    }
    return value;
  };
  const deadline = performance.now() + limits.maxMillis;
  const step = () => {
    if (++steps > limits.maxSteps) limitFail(`more than ${limits.maxSteps} evaluation steps (a loop too long?)`);
    if ((steps & 1023) === 0 && performance.now() > deadline) limitFail(`more than ${limits.maxMillis} ms to render`);
  };
  // Instance properties shadow the prototype's methods, so the interpreter's own recursive calls come here.
  const self = interpreter as unknown as { evaluate: Evaluate; evaluateBlock: (statements: unknown[], environment: Environment) => RuntimeValue };
  const evaluate = self.evaluate.bind(interpreter);
  const evaluateBlock = self.evaluateBlock.bind(interpreter);
  self.evaluate = (statement, environment) => {
    step();
    // `statement` is undefined for an absent part of an expression (a slice's start): the interpreter answers Undefined.
    const overridden = jinja2Override(statement, environment, evaluate, iterables);
    if (overridden) return overridden;
    const value = evaluate(statement, environment);
    if (value.type === 'UndefinedValue' && statement && iterables.has(statement as object)) return runtimeValue([]);
    return check(value);
  };
  self.evaluateBlock = (statements, environment) => {
    step();
    const value = check(evaluateBlock(statements, environment));
    totalChars += typeof value.value === 'string' ? value.value.length : 0;
    if (totalChars > limits.maxTotalChars) limitFail(`more than ${limits.maxTotalChars} characters of output`);
    return value;
  };
  return withPythonBooleans(env, () => String(interpreter.run(template.parsed).value));
}
