// A kernel dispatch as data: the kernel and its override constants, its bindings (buffers, plus two placeholders:
// the op's own params uniform and the forward step's uniform), its params and its workgroup count, optionally
// functions of the step. The kernel families (src/gpu/kernels/, behind kernels.ts and forward-kernels.ts) describe every op this way once;
// their call-style methods record the description at once (`recordOps`, uniforms from the allocator), and a
// forward plan (src/model/forward-plan.ts) turns each into a `FixedOp` once: pipeline, its own params uniform and
// bind group built at plan time, so that a step only writes the one step uniform (`packStep`) and encodes.
//
// The step uniform, WGSL `StepParams { m, pos0, splits }` (shaders/step_params.wgsl, composed before rope.wgsl,
// attention.wgsl and attention_combine.wgsl): the step's token count, its first position and the attention's
// position splits (1 for prefill and short decodes). The values that change every token live there and nowhere
// else; every other param is fixed for a given m.
import type { Binding, ComputeBatch } from './dispatch.ts';
import type { KernelSource, OverrideConstants, PipelineCache } from './pipeline-cache.ts';
import { packParams, type ParamField, type UniformAllocator } from './uniforms.ts';

/** What a forward step varies: m tokens at positions [pos0, pos0 + m), attention split `splits` ways. */
export interface StepParams {
  m: number;
  pos0: number;
  splits: number;
}

/** Binding placeholders: the op's own params uniform, the step uniform. */
export const PARAMS = 'params' as const;
export const STEP = 'step' as const;
export type OpBinding = Binding | typeof PARAMS | typeof STEP;

export interface KernelOp {
  kernel: KernelSource;
  constants: OverrideConstants;
  bindings: readonly OpBinding[];
  /** The op's params uniform (bound at PARAMS): fixed for the op, never a function of the step. */
  params: readonly ParamField[];
  workgroups: number | ((s: StepParams) => number);
  /** Runs only in the steps this accepts (attention's split and unsplit forms). */
  when?: (s: StepParams) => boolean;
}

/** The step uniform's bytes (WGSL StepParams). */
export function packStep(s: StepParams): ArrayBuffer {
  return packParams([s.m, s.pos0, s.splits]);
}

export function opRuns(op: Pick<KernelOp, 'when'>, s: StepParams): boolean {
  return !op.when || op.when(s);
}

export function opWorkgroups(op: Pick<KernelOp, 'workgroups'>, s: StepParams): number {
  return typeof op.workgroups === 'number' ? op.workgroups : op.workgroups(s);
}

/** The compiled pipeline of an op; throws when it is not compiled. */
export function opPipeline(pipelines: PipelineCache, op: KernelOp): GPUComputePipeline {
  const pipeline = pipelines.peek(op.kernel, op.constants);
  if (!pipeline) throw new Error(`Kernel ${op.kernel.name} ${JSON.stringify(op.constants)} is not compiled: prepare it first`);
  return pipeline;
}

/** Compiles every op's pipeline (each distinct kernel and constants once). */
export async function compileOps(pipelines: PipelineCache, ops: Iterable<KernelOp>): Promise<void> {
  const distinct = new Map<KernelSource, Map<string, KernelOp>>();
  for (const op of ops) {
    if (!distinct.has(op.kernel)) distinct.set(op.kernel, new Map());
    distinct.get(op.kernel)!.set(JSON.stringify(op.constants), op);
  }
  await Promise.all([...distinct.values()].flatMap((byConstants) => [...byConstants.values()].map((op) => pipelines.get(op.kernel, op.constants))));
}

/** Records ops now, for this step: params and step uniforms from the allocator (the kernels' call-style methods). */
export function recordOps(batch: ComputeBatch, pipelines: PipelineCache, uniforms: UniformAllocator, ops: readonly KernelOp[], s: StepParams): void {
  for (const op of ops) {
    if (!opRuns(op, s)) continue;
    const bindings = op.bindings.map((b) => (b === PARAMS ? uniforms.params(...op.params) : b === STEP ? uniforms.get(packStep(s)) : b));
    batch.dispatch(opPipeline(pipelines, op), bindings, opWorkgroups(op, s));
  }
}

/** An op ready to encode: pipeline and bind group built once, its params in a uniform of its own. */
export interface FixedOp {
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  workgroups: KernelOp['workgroups'];
  when?: KernelOp['when'];
}

/**
 * Builds an op's pipeline choice, params uniform and bind group (the step placeholder bound to `step`). The params
 * uniform goes into `owned` (the caller destroys it with the plan).
 */
export function fixOp(device: GPUDevice, pipelines: PipelineCache, op: KernelOp, step: GPUBuffer, owned: GPUBuffer[]): FixedOp {
  const pipeline = opPipeline(pipelines, op);
  const entries = op.bindings.map((b, binding): GPUBindGroupEntry => {
    if (b === STEP) return { binding, resource: { buffer: step } };
    if (b === PARAMS) {
      const bytes = packParams(op.params);
      const buffer = device.createBuffer({ label: `${op.kernel.name} params`, size: bytes.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(buffer, 0, bytes);
      owned.push(buffer);
      return { binding, resource: { buffer } };
    }
    return { binding, resource: 'getMappedRange' in b ? { buffer: b } : { buffer: b.buffer, offset: b.offset ?? 0, size: b.size } };
  });
  const bindGroup = device.createBindGroup({ label: op.kernel.name, layout: pipeline.getBindGroupLayout(0), entries });
  return { pipeline, bindGroup, workgroups: op.workgroups, when: op.when };
}
