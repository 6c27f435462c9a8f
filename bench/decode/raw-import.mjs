// Node module hooks for the shaders' `?raw` imports (Vite's), so that a bench script runs under plain Node + tsx:
//   node --import ./bench/decode/raw-import.mjs --import tsx bench/decode/step-cpu.ts ...
import { register } from 'node:module';

if (!globalThis.__rawImportHooks) {
  globalThis.__rawImportHooks = true;
  register('data:text/javascript,' + encodeURIComponent(`
    import { readFile } from 'node:fs/promises';
    export async function resolve(specifier, context, next) {
      if (specifier.endsWith('?raw')) {
        const { url } = await next(specifier.slice(0, -4), context);
        return { url: url + '?raw', shortCircuit: true, format: 'module' };
      }
      return next(specifier, context);
    }
    export async function load(url, context, next) {
      if (url.endsWith('?raw')) {
        const text = await readFile(new URL(url.slice(0, -4)), 'utf8');
        return { format: 'module', source: 'export default ' + JSON.stringify(text) + ';', shortCircuit: true };
      }
      return next(url, context);
    }
  `), import.meta.url);
}
