// The one context every kernel family of this folder takes: the device, the pipeline cache, the ONE allocator of
// params uniforms (uniforms.ts), the adapter's workgroup shapes (kernel-shapes.ts: the row reductions' and the
// forward kernels' in one object) and the device features the families choose their kernels by (shader-f16,
// subgroups and their sizes). It also holds the placeholder buffers bound in
// place of unused bindings, and records or compiles ops (kernel-op.ts) with its cache and allocator.
import type { GpuContext, GpuLimits } from '../device.ts';
import type { ComputeBatch } from '../dispatch.ts';
import { compileOps, recordOps, type KernelOp, type StepParams } from '../kernel-op.ts';
import { forwardKernelShapesFor, kernelShapesFor, type ForwardKernelShapes, type KernelShapes } from '../kernel-shapes.ts';
import { PipelineCache, type KernelSource, type OverrideConstants } from '../pipeline-cache.ts';
import { UniformAllocator } from '../uniforms.ts';

/** Every family's shapes: the row reductions' (kernelShapesFor) and the forward kernels' (forwardKernelShapesFor). */
export type AllKernelShapes = KernelShapes & ForwardKernelShapes;

/** The device features the families choose kernels by. */
export interface KernelFeatures {
  /** `shader-f16`: the F16 products read their halves natively. */
  f16: boolean;
  /** `subgroups`, with the adapter's subgroup sizes (undefined where it does not say). */
  subgroups: boolean;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
}

export interface KernelContextOptions {
  /** Override the per-adapter shapes (tests force small workgroups or other adapters' shapes). */
  shapes?: Partial<AllKernelShapes>;
  /** Share a pipeline cache; by default the context makes one. */
  pipelines?: PipelineCache;
  /** Share a params allocator (the caller then destroys it); by default the context owns one. */
  uniforms?: UniformAllocator;
}

/** A kernel and the override constants of its pipeline: what an op spreads into its description. */
export interface Prepared {
  kernel: KernelSource;
  constants: OverrideConstants;
}

/** Placeholders: 0 for read-only unused bindings, 1 and 2 for writable ones (distinct, so they never alias). */
export type Placeholder = 0 | 1 | 2;

export class KernelContext {
  readonly device: GPUDevice;
  readonly limits: GpuLimits;
  readonly shapes: AllKernelShapes;
  readonly features: KernelFeatures;
  readonly pipelines: PipelineCache;
  readonly uniforms: UniformAllocator;
  private readonly ownsUniforms: boolean;
  private readonly placeholders: (GPUBuffer | undefined)[] = [];

  constructor(
    readonly gpu: GpuContext,
    options: KernelContextOptions = {},
  ) {
    this.device = gpu.device;
    this.limits = gpu.limits;
    this.shapes = { ...kernelShapesFor(gpu.adapterInfo, gpu.limits), ...forwardKernelShapesFor(gpu.adapterInfo, gpu.limits), ...options.shapes };
    const { subgroupMinSize, subgroupMaxSize } = gpu.adapterInfo;
    this.features = { f16: gpu.features.f16, subgroups: gpu.features.subgroups, subgroupMinSize, subgroupMaxSize };
    this.pipelines = options.pipelines ?? new PipelineCache(gpu.device);
    this.ownsUniforms = options.uniforms === undefined;
    this.uniforms = options.uniforms ?? new UniformAllocator(gpu.device);
  }

  /** The buffer bound in place of an unused binding (bias off, no KV-cache store, no sinks), made on first use. */
  unused(which: Placeholder): GPUBuffer {
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    return (this.placeholders[which] ??= this.device.createBuffer({ label: `unused binding ${which}`, size: 16, usage }));
  }

  /** Records ops now, for this step (params and step uniforms from the allocator): the call-style methods. */
  record(batch: ComputeBatch, ops: readonly KernelOp[], step: StepParams): void {
    recordOps(batch, this.pipelines, this.uniforms, ops, step);
  }

  /** Compiles the pipelines of these ops (a forward plan's prepare; tests before they record). */
  async compile(ops: Iterable<KernelOp>): Promise<void> {
    await compileOps(this.pipelines, ops);
  }

  /** Releases the params uniforms (when the context owns them) and the placeholders. */
  destroy(): void {
    if (this.ownsUniforms) this.uniforms.destroy();
    for (const buffer of this.placeholders) buffer?.destroy();
    this.placeholders.length = 0;
  }
}

/**
 * What the facades (../forward-kernels.ts, ../kernels.ts) share: a context of their own (made from the options; they
 * then destroy it) or a shared one, and its parts by name.
 */
export class KernelSet {
  readonly ctx: KernelContext;
  private readonly ownsContext: boolean;

  constructor(gpu: GpuContext | KernelContext, options: KernelContextOptions = {}) {
    this.ownsContext = !(gpu instanceof KernelContext);
    this.ctx = gpu instanceof KernelContext ? gpu : new KernelContext(gpu, options);
  }

  get gpu(): GpuContext {
    return this.ctx.gpu;
  }
  get shapes(): AllKernelShapes {
    return this.ctx.shapes;
  }
  get pipelines(): PipelineCache {
    return this.ctx.pipelines;
  }
  get uniforms(): UniformAllocator {
    return this.ctx.uniforms;
  }

  /** Compiles the pipelines of these ops (a forward plan's prepare; tests before they record). */
  async compile(ops: Iterable<KernelOp>): Promise<void> {
    await this.ctx.compile(ops);
  }

  /** Releases the context when it is this set's own (its uniforms if it owns them, its placeholders). */
  destroy(): void {
    if (this.ownsContext) this.ctx.destroy();
  }
}
