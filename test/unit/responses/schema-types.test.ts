// The zod schemas are the source of the wire types; this checks at compile time (tsc) that what they produce
// is what the openai SDK types, and at run time that the SDK-shaped objects it builds parse.
import type {
  Response as SdkResponse,
  ResponseCodeInterpreterToolCall,
  ResponseCustomToolCall,
  ResponseFunctionToolCall,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  ResponseUsage,
  ResponseCompactionItem,
} from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import {
  InputItem,
  type OutputCodeInterpreterCall,
  type OutputCompaction,
  type OutputCustomToolCall,
  type OutputFunctionCall,
  type OutputMessage,
  type OutputReasoning,
  type ResponseObject,
  type StreamEvent,
  type Usage,
} from '../../../src/responses/schema.ts';

/** Type-level only (never called): each line compiles only when the left type is assignable to the SDK's. */
function sdkAssignability(): void {
  const m: ResponseOutputMessage = {} as OutputMessage;
  const r: ResponseReasoningItem = {} as OutputReasoning;
  const f: ResponseFunctionToolCall = {} as OutputFunctionCall;
  const c: ResponseCustomToolCall = {} as OutputCustomToolCall;
  const k: ResponseCompactionItem = {} as OutputCompaction;
  const ci: ResponseCodeInterpreterToolCall = {} as OutputCodeInterpreterCall;
  const u: ResponseUsage = {} as Usage;
  // `output_text` is computed by the SDK on its side; tools and tool_choice accept hosted kinds loosely; `usage` is
  // null until known and a JSON schema format's `description` null when not given, as the API sends them (and the
  // Open Responses schema requires), where the SDK types both optional.
  const o: Omit<SdkResponse, 'output_text' | 'tools' | 'tool_choice' | 'usage' | 'text'> = {} as Omit<ResponseObject, 'tools' | 'tool_choice' | 'usage' | 'text'>;
  const ou: SdkResponse['usage'] = {} as NonNullable<ResponseObject['usage']>;
  const ot: Omit<NonNullable<SdkResponse['text']>, 'format'> = {} as Omit<ResponseObject['text'], 'format'>;
  // The Open Responses names of the reasoning text events (sent only when the host asks) are not the SDK's.
  const e: ResponseStreamEvent = {} as Exclude<StreamEvent, { response: unknown } | { type: 'response.reasoning.delta' | 'response.reasoning.done' }>;
  void [m, r, f, c, k, ci, u, o, ou, ot, e];
  // The checks above bite: if the project's types widened to `any`/`unknown` these would stop being errors and
  // `@ts-expect-error` itself would fail the typecheck.
  // @ts-expect-error a function call is not an SDK message
  const wrongKind: ResponseOutputMessage = {} as OutputFunctionCall;
  // @ts-expect-error usage is not a response
  const notAResponse: Omit<SdkResponse, 'output_text' | 'tools' | 'tool_choice' | 'usage' | 'text'> = {} as Usage;
  void [wrongKind, notAResponse];
}

describe('schema types match the SDK', () => {
  // Output items, usage, the response object and stream events are assignable to the SDK types: the proof is that
  // this file typechecks (`npx tsc --noEmit -p .`, step 0 of `npm test`), with the negative checks in
  // sdkAssignability showing that the check can fail.
  it('every output item parses as an input item (so a history replays through the one normaliser)', () => {
    const items: unknown[] = [
      { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'a', annotations: [] }], phase: 'final_answer' },
      { id: 'rs_1', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'r' }], status: 'completed', encrypted_content: 'x' },
      { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'incomplete' },
      { id: 'ctc_1', type: 'custom_tool_call', call_id: 'call_2', name: 'g', input: 'raw' },
      { id: 'cmp_1', type: 'compaction', encrypted_content: 'blob' },
      { id: 'ci_1', type: 'code_interpreter_call', code: 'print(1)', container_id: 'auto', outputs: [], status: 'completed' },
    ];
    for (const item of items) expect(InputItem.safeParse(item).success).toBe(true);
  });
});
