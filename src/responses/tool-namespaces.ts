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
