// `namespace` tools (`{type:"namespace", name, description?, tools:[functions, custom tools]}`), as Codex sends
// them (its `additional_tools` input items, whose tools join the request's, are unfolded in schema.ts).
//
// The chat template sees plain functions only, so a namespace's members are offered under one qualified name each,
// the way Codex itself flattens a namespaced tool where a boundary cannot keep the pair (codex-rs
// protocol/src/tool_name.rs, `canonical_flat_name`): the namespace with trailing `_` trimmed, `__`, the name with
// leading `_` trimmed: `mcp__node_repl` + `js` -> `mcp__node_repl__js`. Members of the reserved `functions`
// namespace (Codex's default one) keep their own names.
//
// A call comes back as Codex routes it: `ToolName::new(namespace, name)` from the item's two fields (the
// `openai` SDK types both `ResponseFunctionToolCall.namespace` and `ResponseCustomToolCall.namespace`), so a call to
// `mcp__node_repl__js` is `{type:"function_call", name:"js", namespace:"mcp__node_repl"}`; a member of `functions`
// carries no namespace (Codex applies its default namespace itself; an invented one makes it look up
// `<namespace><name>` and fail). Replayed calls with a `namespace` are shown to the model under the qualified name
// again, so the history reads the same as the tools on offer.

/** Codex's default namespace: its members are plain tools. */
export const DEFAULT_NAMESPACE = 'functions';

export interface NamespacedName {
  namespace: string;
  name: string;
}

/** The single name the model sees for `name` in `namespace`. */
export function qualifiedName(namespace: string | null | undefined, name: string): string {
  if (namespace === null || namespace === undefined || namespace === '' || namespace === DEFAULT_NAMESPACE) return name;
  return `${namespace.replace(/_+$/, '')}__${name.replace(/^_+/, '')}`;
}

// A named tool_choice for a namespace member. The `openai` SDK types `{type:"function"|"custom", name}` only
// (ToolChoiceFunction / ToolChoiceCustom, 6.x and 7.x); the call items it types carry `{name, namespace}`, so a
// choice spelled the same way is accepted: `{type:"function", name:"js", namespace:"mcp__node_repl"}`. So are
// the flat name the model sees (`name:"mcp__node_repl__js"`, how a client that flattens namespaces names it) and
// a member's own name when exactly one namespace holds a member of that kind by that name (several: a 400 asking
// for `namespace`). The choice is served under the qualified name, so the constraint forces that member.

/** A tool as the request declares it: a function/custom tool, or a namespace of them. */
interface DeclaredTool {
  type: string;
  name?: string;
  tools?: readonly { type: string; name: string }[];
}

export interface NamedToolChoice {
  type: 'function' | 'custom';
  name: string;
  namespace?: string | null;
}

export type NamedChoiceTarget = { qualified: string } | { missing: true } | { ambiguous: string[] };

/** The name the model sees for the tool a named tool_choice forces, or why there is none. */
export function namedChoiceTarget(tools: readonly DeclaredTool[], choice: NamedToolChoice): NamedChoiceTarget {
  const namespace = choice.namespace ?? null;
  const plain = namespace === null || namespace === '' || namespace === DEFAULT_NAMESPACE;
  if (plain && tools.some((t) => t.type === choice.type && t.name === choice.name)) return { qualified: choice.name };
  const members: { namespace: string; name: string }[] = [];
  for (const tool of tools) {
    if (tool.type !== 'namespace' || tool.name === undefined) continue;
    for (const member of tool.tools ?? []) if (member.type === choice.type) members.push({ namespace: tool.name, name: member.name });
  }
  if (!plain) {
    const member = members.find((m) => m.namespace === namespace && m.name === choice.name);
    return member ? { qualified: qualifiedName(member.namespace, member.name) } : { missing: true };
  }
  const flat = members.find((m) => qualifiedName(m.namespace, m.name) === choice.name);
  if (flat) return { qualified: choice.name };
  const byOwnName = members.filter((m) => m.name === choice.name);
  if (byOwnName.length === 1) return { qualified: qualifiedName(byOwnName[0]!.namespace, byOwnName[0]!.name) };
  if (byOwnName.length > 1) return { ambiguous: byOwnName.map((m) => m.namespace) };
  return { missing: true };
}

/** tool_choice as the model is served it: a named choice under the qualified name of the tool it forces. */
export function servedToolChoice<C>(tools: readonly DeclaredTool[], choice: C): C {
  if (typeof choice !== 'object' || choice === null) return choice;
  const named = choice as unknown as NamedToolChoice;
  if ((named.type !== 'function' && named.type !== 'custom') || typeof named.name !== 'string') return choice;
  const target = namedChoiceTarget(tools, named);
  return 'qualified' in target ? ({ type: named.type, name: target.qualified } as C) : choice;
}
