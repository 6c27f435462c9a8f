// The events an output parser sends (output-parser.ts for Hermes/Qwen, json-calls-parser.ts for the JSON-call formats,
// harmony-parser.ts for Harmony).

export type ParseEvent =
  | { kind: 'reasoning.start' }
  | { kind: 'reasoning.delta'; text: string }
  /** `complete` false when the output stopped before the block was closed. */
  | { kind: 'reasoning.end'; complete: boolean }
  /** `phase` set where the format names it (Harmony's channels); absent: the pipeline decides (stream-events.ts). */
  | { kind: 'text.delta'; text: string; phase?: 'commentary' | 'final_answer' }
  /** The message the text belonged to ended (Harmony: the next text is another message). */
  | { kind: 'text.end' }
  /** `name` as the client declared it; `namespace` set for a member of a `namespace` tool (tool-namespaces.ts). */
  | { kind: 'call.start'; name: string; custom: boolean; namespace?: string }
  | { kind: 'call.delta'; text: string }
  /** `complete` false when the output stopped before the call's arguments were whole. */
  | { kind: 'call.end'; complete: boolean }
  /** Code for the code interpreter (Harmony's `python` recipient): a `code_interpreter_call` item. */
  | { kind: 'code.start' }
  | { kind: 'code.delta'; text: string }
  | { kind: 'code.end'; complete: boolean };
