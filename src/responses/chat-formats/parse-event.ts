// The events an output parser sends (output-parser.ts for Hermes/Qwen, json-calls-parser.ts for the JSON-call formats).

export type ParseEvent =
  | { kind: 'reasoning.start' }
  | { kind: 'reasoning.delta'; text: string }
  /** `complete` false when the output stopped before the block was closed. */
  | { kind: 'reasoning.end'; complete: boolean }
  | { kind: 'text.delta'; text: string }
  /** `name` as the client declared it; `namespace` set for a member of a `namespace` tool (tool-namespaces.ts). */
  | { kind: 'call.start'; name: string; custom: boolean; namespace?: string }
  | { kind: 'call.delta'; text: string }
  /** `complete` false when the output stopped before the call's arguments were whole. */
  | { kind: 'call.end'; complete: boolean };
