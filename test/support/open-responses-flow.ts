// The checks the Open Responses compliance suite makes on one flow's answer, shared by the tests that run its flows
// (test/unit/responses/open-responses-suite.test.ts on the fake engine, test/unit/chat-formats/conformance-formats.test.ts
// once per chat format, test/clients/open-responses.test.ts against `serve`): every streamed event a valid document,
// the argument events of a function call, the final response valid with output holding the flow's expected item.
import { expect } from 'vitest';
import { assertOpenResponsesEvent, assertOpenResponsesResponse } from './open-responses-schema.ts';

/** What a flow expects: the item type its output must hold. */
export interface SuiteFlowExpectation {
  expectType?: string;
}

/**
 * The suite's checks on a streamed flow's events; `reasoning` true: the stream carries reasoning deltas, false: it
 * carries no reasoning event at all, absent: not checked. Returns the terminal event's response.
 */
export function checkSuiteStream(events: readonly { type: string; response?: unknown }[], flow: SuiteFlowExpectation, reasoning?: boolean): unknown {
  for (const event of events) assertOpenResponsesEvent(event, { documentOnly: true });
  const types = events.map((e) => e.type);
  if (reasoning === true) expect(types).toContain('response.reasoning.delta');
  if (reasoning === false) expect(types.filter((t) => t.startsWith('response.reasoning'))).toEqual([]);
  if (flow.expectType === 'function_call') {
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
  }
  return events.at(-1)!.response;
}

/** The suite's checks on a flow's final response (completed unless `completed` is false: then not checked). */
export function checkSuiteResponse(final: unknown, flow: SuiteFlowExpectation, completed = true): void {
  assertOpenResponsesResponse(final);
  const resource = final as { status: string; output: { type: string }[] };
  if (completed) expect(resource.status).toBe('completed');
  expect(resource.output.length).toBeGreaterThan(0);
  if (flow.expectType) expect(resource.output.map((i) => i.type)).toContain(flow.expectType);
}
