// The request-time check engines call from `Engine.checkConstraint`: compiles the constraint (cached, so the
// later generate() reuses it) and turns a ConstraintError into an `invalid_request` EngineError naming the schema
// keyword and path or the grammar position, with the request parameter it came from (from the error's fields:
// its `subject`, `keyword`, `toolName`, never its message). A cost bound (ConstraintTooLargeError) is one too, its
// message naming the tool and the bound.
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
      if (spec.kind === 'json_schema') throw invalid(error, 'invalid_json_schema', 'text.format.schema');
      const custom = spec.kind === 'tools' && spec.tools.some((t) => t.type === 'custom' && t.name === error.toolName);
      throw invalid(error, custom ? 'invalid_grammar' : 'invalid_tool_schema', 'tools');
    }
    if (spec.kind === 'json_schema') throw invalid(error, error.keyword ? 'unsupported_json_schema_keyword' : 'invalid_json_schema', 'text.format.schema');
    const param = spec.kind === 'tools' && error.subject === 'tool_choice' ? 'tool_choice' : 'tools';
    throw invalid(error, error.subject === 'grammar' ? 'invalid_grammar' : 'invalid_tool_schema', param);
  }
}

function invalid(error: ConstraintError, code: string, param: string): EngineError {
  return new EngineError('invalid_request', error.message, { code, param });
}
