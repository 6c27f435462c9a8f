// An independent validator for the JSON Schema subset the constraint engine supports, used to check what
// constrained walks produce (written from the JSON Schema rules, sharing no code with the compiler).
type Schema = Record<string, unknown>;

export function validateJson(value: unknown, schema: unknown, root: unknown = schema): string | null {
  if (schema === true || schema === undefined || schema === null) return null;
  const s = schema as Schema;
  if (typeof s.$ref === 'string') {
    let node: unknown = root;
    for (const part of s.$ref.slice(1).split('/').filter(Boolean)) node = (node as Schema)[part];
    return validateJson(value, node, root);
  }
  if ('const' in s) return JSON.stringify(value) === JSON.stringify(s.const) ? null : `expected const ${JSON.stringify(s.const)}`;
  if (Array.isArray(s.enum)) return s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)) ? null : 'not in enum';
  if (Array.isArray(s.anyOf)) return s.anyOf.some((sub) => validateJson(value, sub, root) === null) ? null : 'matches no anyOf branch';
  const types = s.type === undefined ? null : Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  if (types && !types.some((t) => typeMatches(value, t))) return `expected type ${types.join('|')}, got ${JSON.stringify(value)}`;
  if (typeof value === 'string') {
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return `string does not match ${s.pattern}`;
    const length = [...value].length;
    if (typeof s.minLength === 'number' && length < s.minLength) return 'string too short';
    if (typeof s.maxLength === 'number' && length > s.maxLength) return 'string too long';
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return 'too few items';
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return 'too many items';
    for (const item of value) {
      const e = validateJson(item, s.items, root);
      if (e) return `item: ${e}`;
    }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = (s.properties ?? {}) as Schema;
    for (const r of (s.required ?? []) as string[]) if (!(r in obj)) return `missing required '${r}'`;
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) {
        const e = validateJson(v, props[k], root);
        if (e) return `${k}: ${e}`;
      } else if (s.additionalProperties === false) return `unexpected property '${k}'`;
    }
  }
  return null;
}

function typeMatches(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return false;
  }
}
