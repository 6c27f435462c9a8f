// The request-time check engines call from `Engine.checkConstraint`: compiles the constraint (cached, so the
// later generate() reuses it) and turns a ConstraintError into a 400 EngineError naming the schema keyword and
// path or the grammar position, with the request parameter it came from. A cost bound (ConstraintTooLargeError)
// is a 400 too, its message naming the tool and the bound.
import type { ConstraintSpec } from '../../common/constraint-spec.ts';
import { EngineError } from '../../common/engine-error.ts';
import { ConstraintError, ConstraintTooLargeError } from './constraint-error.ts';
import { type CompileOptions, checkConstraintSpec } from './token-constraint.ts';

export function checkConstraintForRequest(spec: ConstraintSpec, options: CompileOptions = {}): void {
  try {
    checkConstraintSpec(spec, options);
  } catch (error) {
    if (!(error instanceof ConstraintError)) throw error;
    if (error instanceof ConstraintTooLargeError) {
      // A cost bound: the message names the tool (or the schema path) and the bound.
      if (spec.kind === 'json_schema') throw new EngineError(error.message, 400, 'invalid_json_schema', 'text.format.schema');
      const custom = spec.kind === 'tools' && spec.tools.some((t) => t.type === 'custom' && t.name === error.toolName);
      throw new EngineError(error.message, 400, custom ? 'invalid_grammar' : 'invalid_tool_schema', 'tools');
    }
    if (spec.kind === 'json_schema') {
      throw new EngineError(error.message, 400, error.keyword ? 'unsupported_json_schema_keyword' : 'invalid_json_schema', 'text.format.schema');
    }
    const grammarProblem = error.position !== undefined || /Custom tool|grammar/.test(error.message);
    throw new EngineError(error.message, 400, grammarProblem ? 'invalid_grammar' : 'invalid_tool_schema', spec.kind === 'tools' && /not declared|requires a tool call/.test(error.message) ? 'tool_choice' : 'tools');
  }
}
