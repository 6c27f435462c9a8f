// What the model must be held to while decoding; the Responses layer builds it, sampling compiles it to token masks.

export type ConstraintSpec =
  | { kind: 'none' }
  /** The whole answer is JSON matching the schema (text.format json_schema / json_object). */
  | { kind: 'json_schema'; schema: Record<string, unknown> | null }
  /**
   * Tool calling in the chat format: `mode` `required` forces a call to start, `named` fixes the tool.
   * Inside a call the JSON must be {"name": <declared>, "arguments": <its schema>}; a custom tool's `input`
   * must match its grammar (`lark` or `regex`) when it has one.
   */
  | {
      kind: 'tools';
      mode: 'auto' | 'required' | 'named';
      name?: string;
      tools: ConstrainedTool[];
      /** The most calls the turn may make (parallel_tool_calls false -> 1, max_tool_calls); absent: no limit. */
      maxCalls?: number;
    };

export type ConstrainedTool =
  | { type: 'function'; name: string; parameters: Record<string, unknown> | null; strict: boolean }
  | { type: 'custom'; name: string; grammar?: { syntax: 'lark' | 'regex'; definition: string } };
