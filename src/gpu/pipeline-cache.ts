// Compute pipelines cached by (shader source, entry point, override constants). Shader modules are cached by
// their source text, so two kernels built from the same WGSL share one module. Compilation failures become a
// `GpuError` with code 'shader-compilation' that carries the compiler's messages.
import { GpuError } from './device.ts';

/** WGSL `override` constants: name -> value (booleans become true/false overrides). */
export type OverrideConstants = Readonly<Record<string, number | boolean>>;

export interface KernelSource {
  /** A short name for labels and errors, e.g. 'matmul_q8_0'. */
  name: string;
  /** The WGSL source text. */
  code: string;
}

export class PipelineCache {
  private readonly modules = new Map<string, { module: GPUShaderModule; id: number; created: Promise<void> }>();
  private nextModuleId = 0;
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();
  private readonly ready = new Map<string, GPUComputePipeline>();

  constructor(private readonly device: GPUDevice) {}

  /** The number of distinct pipelines built so far. */
  get size(): number {
    return this.pipelines.size;
  }

  /**
   * The pipeline for this kernel, entry point and constants, compiled on first use (asynchronously, so
   * compilation does not block the thread); rejects with a 'shader-compilation' GpuError on a WGSL error.
   */
  get(kernel: KernelSource, constants: OverrideConstants = {}, entryPoint = 'main'): Promise<GPUComputePipeline> {
    const { module, id, created } = this.moduleFor(kernel);
    const key = pipelineKey(id, entryPoint, constants);
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      pipeline = created.then(() => this.build(kernel, module, entryPoint, constants));
      this.pipelines.set(key, pipeline);
      pipeline.then(
        (built) => this.ready.set(key, built),
        () => this.pipelines.delete(key), // let a later call retry and report again
      );
    }
    return pipeline;
  }

  /** The pipeline if it is already built (after `get` resolved), else undefined: for hot paths that must not await. */
  peek(kernel: KernelSource, constants: OverrideConstants = {}, entryPoint = 'main'): GPUComputePipeline | undefined {
    const cached = this.modules.get(kernel.code);
    if (!cached) return undefined;
    return this.ready.get(pipelineKey(cached.id, entryPoint, constants));
  }

  /** The module for this source; `created` rejects if WGSL parsing failed (captured, not left uncaptured). */
  private moduleFor(kernel: KernelSource): { module: GPUShaderModule; id: number; created: Promise<void> } {
    let cached = this.modules.get(kernel.code);
    if (!cached) {
      this.device.pushErrorScope('validation');
      const module = this.device.createShaderModule({ label: kernel.name, code: kernel.code });
      const created = this.device.popErrorScope().then(async (error) => {
        if (error) {
          const messages = await compilerMessages(module);
          throw new GpuError('shader-compilation', `WGSL error in ${kernel.name}: ${messages || error.message}`);
        }
      });
      created.catch(() => this.modules.delete(kernel.code));
      cached = { module, id: this.nextModuleId++, created };
      this.modules.set(kernel.code, cached);
    }
    return cached;
  }

  private async build(
    kernel: KernelSource,
    module: GPUShaderModule,
    entryPoint: string,
    constants: OverrideConstants,
  ): Promise<GPUComputePipeline> {
    const label = `${kernel.name}:${entryPoint}${constantsLabel(constants)}`;
    try {
      return await this.device.createComputePipelineAsync({
        label,
        layout: 'auto',
        compute: { module, entryPoint, constants: toGpuConstants(constants) },
      });
    } catch (cause) {
      const messages = await compilerMessages(module);
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw new GpuError(
        'shader-compilation',
        `Could not build compute pipeline ${label}: ${detail}${messages ? `\n${messages}` : ''}`,
        { cause },
      );
    }
  }
}

function toGpuConstants(constants: OverrideConstants): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(constants)) out[name] = typeof value === 'boolean' ? Number(value) : value;
  return out;
}

function pipelineKey(moduleId: number, entryPoint: string, constants: OverrideConstants): string {
  return `${moduleId}|${entryPoint}${constantsLabel(constants)}`;
}

function constantsLabel(constants: OverrideConstants): string {
  const names = Object.keys(constants).sort();
  return names.length === 0 ? '' : `{${names.map((n) => `${n}=${Number(constants[n])}`).join(',')}}`;
}

async function compilerMessages(module: GPUShaderModule): Promise<string> {
  try {
    const info = await module.getCompilationInfo();
    return info.messages
      .filter((m) => m.type === 'error' || m.type === 'warning')
      .map((m) => `${m.type} at ${m.lineNum}:${m.linePos}: ${m.message}`)
      .join('\n');
  } catch {
    return '';
  }
}
