// Writes the hostile GGUF files and what each must give:
//   npx tsx tools/make-hostile-gguf/cli.ts --out <dir>
// <dir>/<name>.gguf for each case (the zeros after the header written as a sparse tail), and
// <dir>/expected.json: name -> { description, phase, error (a regular expression), limits }.
import { closeSync, ftruncateSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hostileGgufs } from './hostile.ts';

const { values } = parseArgs({ options: { out: { type: 'string' }, help: { type: 'boolean', default: false } } });
if (values.help || !values.out) {
  console.error('usage: npx tsx tools/make-hostile-gguf/cli.ts --out DIR');
  process.exit(values.help ? 0 : 2);
}
const out = values.out;
mkdirSync(out, { recursive: true });
const expected: Record<string, unknown> = {};
for (const c of await hostileGgufs()) {
  const fd = openSync(join(out, `${c.name}.gguf`), 'w');
  try {
    writeSync(fd, c.header);
    ftruncateSync(fd, c.size);
  } finally {
    closeSync(fd);
  }
  expected[c.name] = { description: c.description, phase: c.phase, size: c.size, error: c.error?.source ?? null, limits: c.limits ?? null };
}
writeFileSync(join(out, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
console.log(JSON.stringify({ out, files: Object.keys(expected).length }));
