// `webgpu-responses serve` as the published package runs it: tools/cli.mjs loads the build of the Node host
// (`vite build --mode node`, dist/node/serve-main.js in the package) instead of the sources through Vite, so it
// needs no dev dependency. The build is made here into a folder of this checkout (its bare imports resolve from
// node_modules as an installed package's would) and the server is started on it with a module hook that refuses
// every package listed in devDependencies, in the CLI process and the one it respawns over SwiftShader.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, startServe, stopServe, TOY_MODEL, type Served } from '../../../tools/serve-process.ts';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  files: string[];
  bin: Record<string, string>;
  scripts: Record<string, string>;
};
const OUT = join(ROOT, '.tmp', `serve-package-${process.pid}`);
const BUNDLE = join(OUT, 'serve-main.js');
const HOOK = join(OUT, 'refuse-dev-dependencies.mjs');

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`). */
function packageOf(specifier: string): string {
  return specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
}

beforeAll(() => {
  mkdirSync(OUT, { recursive: true });
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--mode', 'node', '--logLevel', 'error'], {
    cwd: ROOT,
    env: { ...process.env, WEBGPU_RESPONSES_NODE_OUT_DIR: OUT },
    stdio: 'pipe',
  });
  const hooks = `const refused = new Set(${JSON.stringify(Object.keys(pkg.devDependencies))});
export async function resolve(specifier, context, next) {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  if (refused.has(name)) throw new Error('serve imported the dev dependency ' + specifier);
  return next(specifier, context);
}`;
  writeFileSync(HOOK, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});\n`);
}, 120_000);

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('the packaged serve', () => {
  test('the build inlines the shaders and imports only Node built-ins and runtime dependencies', () => {
    const code = readFileSync(BUNDLE, 'utf8');
    expect(code).not.toMatch(/from\s*["'][^"']*\?raw["']/);
    // The WGSL sources are in the file (as string literals).
    const kernelLine = readFileSync(join(ROOT, 'shaders/rmsnorm.wgsl'), 'utf8').split('\n')[0]!;
    expect(code).toContain(JSON.stringify(kernelLine).slice(1, -1));
    const specifiers = [...code.matchAll(/(?:^|[\s;}])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm)].map((m) => m[1] ?? m[2]!);
    expect(specifiers.length).toBeGreaterThan(3);
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    for (const s of specifiers) {
      if (builtins.has(s)) continue;
      expect(s.startsWith('.'), `relative import ${s} in a one-file build`).toBe(false);
      expect(Object.keys(pkg.dependencies), `${s} must be a runtime dependency`).toContain(packageOf(s));
    }
    // The CLI imports `webgpu` for the engine on Dawn: a runtime dependency too.
    expect(Object.keys(pkg.dependencies)).toContain('webgpu');
    expect(Object.keys(pkg.devDependencies)).not.toContain('webgpu');
  });

  test('the package carries the build and the CLI, and builds it before packing; a checkout keeps vite.config.ts out', () => {
    expect(pkg.files).toContain('dist');
    expect(pkg.files).toContain(pkg.bin['webgpu-responses']!.replace(/^\.\//, ''));
    expect(pkg.files).not.toContain('vite.config.ts'); // its absence is how cli.mjs knows it runs from the package
    expect(pkg.scripts.build).toContain('vite build --mode node');
    expect(pkg.scripts.prepack).toBe('npm run build');
  });

  describe('serve on the build, every dev dependency refused', () => {
    let served: Served;
    let store: string;
    beforeAll(async () => {
      store = join(OUT, 'store');
      served = await startServe(['--model', TOY_MODEL, '--store', store], 90_000, {
        WEBGPU_RESPONSES_SERVE_BUNDLE: BUNDLE,
        NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${HOOK}`].filter(Boolean).join(' '),
      });
    }, 120_000);
    afterAll(async () => {
      if (served) await stopServe(served);
    });

    test('answers a response and a stream', async () => {
      const response = await fetch(`${served.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Hello', max_output_tokens: 6, temperature: 0 }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { object: string; status: string; usage: { output_tokens: number } };
      expect(body.object).toBe('response');
      expect(['completed', 'incomplete']).toContain(body.status);
      expect(body.usage.output_tokens).toBeGreaterThan(0);
      const stream = await fetch(`${served.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Hello', max_output_tokens: 4, stream: true }),
      });
      const text = await stream.text();
      expect(text).toMatch(/^event: response\.created/);
      expect(text).toMatch(/event: response\.(completed|incomplete)\n/);
      expect(served.stderr()).not.toContain('dev dependency');
    });
  });
});
