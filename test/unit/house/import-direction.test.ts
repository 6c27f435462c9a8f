// The house's layers point down only: each folder of src/ may import the folders listed for it below and nothing
// else, and no chain of imports between files comes back to where it started. A new folder must be given its place
// here before it can be imported.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = 'src';

/** What each layer may import (besides itself), bottom to top. `index.ts` is the package entry: anything. */
const ALLOWED: Record<string, string[]> = {
  common: [],
  gpu: ['common', 'shaders'],
  model: ['common', 'gpu', 'shaders'],
  sampling: ['common', 'gpu', 'shaders'],
  store: ['common'],
  engine: ['common', 'gpu', 'model', 'sampling', 'shaders'],
  responses: ['common', 'engine', 'store'],
  'model-store': ['common', 'model', 'responses'],
  sw: ['common', 'gpu', 'model', 'sampling', 'store', 'engine', 'responses', 'model-store'],
  'engine-worker': ['common', 'gpu', 'model', 'sampling', 'store', 'engine', 'responses', 'model-store', 'sw'],
  embed: ['common', 'sw'],
  demo: ['common', 'responses', 'model-store', 'sw', 'embed'],
  cli: ['common', 'gpu', 'model', 'sampling', 'engine', 'shaders'],
  'node-host': ['common', 'gpu', 'model', 'sampling', 'store', 'engine', 'responses'],
  'index.ts': ['*'],
};

export interface ImportEdge {
  from: string;
  to: string;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** Relative imports of every .ts file under `root`, as repository-relative paths without query suffixes. */
export function importEdges(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name)) {
        for (const m of readFileSync(path, 'utf8').matchAll(IMPORT)) {
          const spec = m[1] ?? m[2] ?? m[3];
          if (!spec.startsWith('.')) continue;
          edges.push({ from: normalize(path), to: withTs(normalize(join(dirname(path), spec.replace(/\?.*$/, '')))) });
        }
      }
    }
  };
  walk(root);
  return edges;
}

function withTs(path: string): string {
  return /\.(ts|wgsl|json|css|html|md)$/.test(path) ? path : `${path}.ts`;
}

/** The layer a path belongs to: its first folder under src/ (or `shaders`, or `index.ts`). */
export function layerOf(path: string, root = SRC): string {
  const rel = relative(root, path);
  if (rel.startsWith('..')) return relative('.', path).split(/[\\/]/)[0];
  const parts = rel.split(/[\\/]/);
  return parts.length === 1 ? parts[0] : parts[0];
}

export function upwardImports(edges: ImportEdge[], allowed: Record<string, string[]>, root = SRC): string[] {
  const bad: string[] = [];
  for (const { from, to } of edges) {
    const a = layerOf(from, root);
    const b = layerOf(to, root);
    if (a === b) continue;
    const rule = allowed[a];
    if (!rule) bad.push(`${from}: layer '${a}' has no place in the layer table`);
    else if (!rule.includes('*') && !rule.includes(b)) bad.push(`${from} imports ${to} ('${a}' may not import '${b}')`);
  }
  return bad;
}

/** Every cycle among files, each as the list of files on it (Tarjan's strongly connected components, iterative). */
export function importCycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, []);
    next.get(from)!.push(to);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: [string, number][] = [[start, 0]];
    while (work.length) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      if (i === 0) {
        index.set(node, counter);
        low.set(node, counter++);
        stack.push(node);
        onStack.add(node);
      }
      const succ = next.get(node)!;
      if (i < succ.length) {
        frame[1] = i + 1;
        const s = succ[i];
        if (!index.has(s)) work.push([s, 0]);
        else if (onStack.has(s)) low.set(node, Math.min(low.get(node)!, index.get(s)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(node)!));
      }
      if (low.get(node) === index.get(node)) {
        const component: string[] = [];
        let top: string;
        do {
          top = stack.pop()!;
          onStack.delete(top);
          component.push(top);
        } while (top !== node);
        const selfLoop = succ.includes(node);
        if (component.length > 1 || selfLoop) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

describe('import direction', () => {
  const edges = importEdges(SRC);

  it('finds the imports it checks (the scan is not empty)', () => {
    expect(edges.length).toBeGreaterThan(100);
    expect(edges).toContainEqual({ from: normalize('src/responses/handler.ts'), to: normalize('src/engine/types.ts') });
  });

  it('every folder of src/ imports only the layers below it', () => {
    expect(upwardImports(edges, ALLOWED)).toEqual([]);
  });

  it('src/common imports nothing', () => {
    expect(edges.filter((e) => layerOf(e.from) === 'common' && layerOf(e.to) !== 'common')).toEqual([]);
  });

  it('no file reaches itself through its imports', () => {
    expect(importCycles(edges)).toEqual([]);
  });

  it('the checks catch a planted upward import and a planted cycle', () => {
    const planted = [...edges, { from: normalize('src/gpu/device.ts'), to: normalize('src/engine/types.ts') }];
    expect(upwardImports(planted, ALLOWED)).toEqual([
      ...upwardImports(edges, ALLOWED),
      `${normalize('src/gpu/device.ts')} imports ${normalize('src/engine/types.ts')} ('gpu' may not import 'engine')`,
    ]);
    const loop = [...edges, { from: normalize('src/common/chat.ts'), to: normalize('src/responses/handler.ts') }];
    expect(importCycles(loop).length).toBeGreaterThan(0);
  });
});
