// `namespace` tools (`{type:"namespace", name, description?, tools:[functions, custom tools]}`) and the
// `additional_tools` input item, as Codex sends them.
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
import type { InputItem, Tool } from './schema.ts';

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

/**
 * The request's tools with those its `additional_tools` input items carry appended (in input order): they are
 * offered like the request's own. A body without such items comes back as it is.
 */
export function withAdditionalTools<B extends { tools?: Tool[] | null | undefined; input?: string | InputItem[] | undefined }>(body: B): B {
  if (!Array.isArray(body.input)) return body;
  const extra: Tool[] = [];
  for (const item of body.input) if (item.type === 'additional_tools') extra.push(...item.tools);
  if (extra.length === 0) return body;
  return { ...body, tools: [...(body.tools ?? []), ...extra] };
}
