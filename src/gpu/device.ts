// The WebGPU adapter and device: one place that asks for an adapter, requests a device with the adapter's real
// limits (not the WebGPU defaults) and the optional features this runtime uses, and turns every way that can
// fail (no WebGPU, no adapter, device lost, out of memory, validation) into a `GpuError` with a specific code.
// Works with `navigator.gpu` in a page or worker and with any `GPU` object (Node on Dawn: the `webgpu` package).

export type GpuErrorCode =
  | 'no-webgpu' // there is no navigator.gpu (browser without WebGPU, or not a secure context)
  | 'no-adapter' // requestAdapter() gave nothing (WebGPU disabled, blocklisted GPU, no driver)
  | 'device-request-failed' // requestDevice() rejected
  | 'device-lost' // the device was lost (driver reset, destroy(), tab in background for too long)
  | 'out-of-memory' // an allocation failed
  | 'validation' // a WebGPU validation error (a bug in this runtime, or a limit exceeded)
  | 'internal' // a WebGPU internal error (e.g. a shader too large for the driver)
  | 'limit-exceeded' // a request that this adapter's limits cannot satisfy (checked before calling WebGPU)
  | 'shader-compilation'; // a WGSL module or compute pipeline failed to compile

export class GpuError extends Error {
  override readonly name = 'GpuError';
  constructor(
    readonly code: GpuErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The optional features this runtime uses, as booleans. */
export interface GpuFeatures {
  /** `shader-f16`: WGSL `enable f16;` (native half-float weights). */
  f16: boolean;
  /** `subgroups`: WGSL subgroup builtins and operations. */
  subgroups: boolean;
  /** `timestamp-query`: GPU timestamps written at compute pass boundaries. */
  timestamps: boolean;
}

export interface GpuAdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
}

/** Limits that the kernels and the buffer layout depend on (the device's, equal to the adapter's). */
export interface GpuLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxComputeWorkgroupSizeX: number;
  maxComputeWorkgroupSizeY: number;
  maxComputeWorkgroupSizeZ: number;
  maxComputeWorkgroupsPerDimension: number;
  maxStorageBuffersPerShaderStage: number;
  maxUniformBuffersPerShaderStage: number;
  maxUniformBufferBindingSize: number;
  maxBindGroups: number;
  maxBindingsPerBindGroup: number;
  minStorageBufferOffsetAlignment: number;
  minUniformBufferOffsetAlignment: number;
}

/** The limits requested from the adapter at their adapter maximum (the compute and buffer ones). */
const REQUESTED_LIMITS: readonly (keyof GpuLimits)[] = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'maxUniformBuffersPerShaderStage',
  'maxUniformBufferBindingSize',
  'maxBindGroups',
  'maxBindingsPerBindGroup',
  'minStorageBufferOffsetAlignment',
  'minUniformBufferOffsetAlignment',
];

export interface GpuLostInfo {
  reason: GPUDeviceLostReason;
  message: string;
}

export interface GpuContext {
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
  readonly features: GpuFeatures;
  readonly limits: GpuLimits;
  readonly adapterInfo: GpuAdapterSummary;
  /**
   * The WGSL language features of the GPU object the adapter came from (`navigator.gpu` or the one passed in:
   * Node's Dawn has no navigator.gpu), e.g. `packed_4x8_integer_dot_product`; empty where it has none.
   */
  readonly wgslLanguageFeatures: ReadonlySet<string>;
  /** Resolves when the device is lost (including by `destroy()`); never rejects. */
  readonly lost: Promise<GpuLostInfo>;
  /** True once the device is lost. */
  readonly isLost: boolean;
  /** Uncaptured WebGPU errors seen so far, oldest first (bounded; the count keeps counting). */
  readonly uncapturedErrors: readonly GpuError[];
  readonly uncapturedErrorCount: number;
  /**
   * Throws the `GpuError` that stops work: 'device-lost' once the device is lost, else the first uncaptured
   * error since the last call (which it then clears). Call it after awaiting GPU work.
   */
  throwIfFailed(): void;
  /** Adds a listener for uncaptured errors; returns the function that removes it. */
  onUncapturedError(listener: (error: GpuError) => void): () => void;
  /** Destroys the device (the `lost` promise then resolves with reason 'destroyed'). */
  destroy(): void;
}

export interface AcquireGpuOptions {
  /**
   * The GPU object to use: defaults to `navigator.gpu`. Pass the `webgpu` package's `create([])` on Node;
   * null means "no WebGPU here" (as when navigator.gpu is missing).
   */
  gpu?: GPU | null;
  powerPreference?: GPUPowerPreference;
  /** Do not request `shader-f16` even where the adapter has it (tests the packed-f16 path on any adapter). */
  forceFallbackF32?: boolean;
  /** Device label (shows in WebGPU error messages). */
  label?: string;
}

const MAX_KEPT_UNCAPTURED_ERRORS = 32;

/** Gets an adapter and a device with the adapter's limits and the features among shader-f16, subgroups, timestamp-query. */
export async function acquireGpu(options: AcquireGpuOptions = {}): Promise<GpuContext> {
  const gpu = options.gpu === undefined ? (typeof navigator !== 'undefined' ? navigator.gpu : undefined) : options.gpu;
  if (!gpu) {
    throw new GpuError(
      'no-webgpu',
      'WebGPU is not available here (no navigator.gpu): use a browser with WebGPU enabled, on https:// or http://localhost.',
    );
  }
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter(options.powerPreference ? { powerPreference: options.powerPreference } : undefined);
  } catch (cause) {
    throw new GpuError('no-adapter', `requestAdapter() failed: ${messageOf(cause)}`, { cause });
  }
  if (!adapter) {
    throw new GpuError(
      'no-adapter',
      'WebGPU is present but gave no adapter (the GPU may be blocklisted or WebGPU disabled; headless Chromium needs --enable-unsafe-webgpu).',
    );
  }

  const wantFeatures: GPUFeatureName[] = ['subgroups', 'timestamp-query'];
  if (!options.forceFallbackF32) wantFeatures.push('shader-f16');
  const requiredFeatures = wantFeatures.filter((f) => adapter.features.has(f));

  const requiredLimits: Record<string, number> = {};
  for (const name of REQUESTED_LIMITS) {
    const value = (adapter.limits as unknown as Record<string, unknown>)[name];
    if (typeof value === 'number') requiredLimits[name] = value;
  }

  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({
      label: options.label ?? 'webgpu-responses',
      requiredFeatures,
      requiredLimits,
    });
  } catch (cause) {
    throw new GpuError('device-request-failed', `requestDevice() failed: ${messageOf(cause)}`, { cause });
  }

  const info = adapter.info;
  const adapterInfo: GpuAdapterSummary = {
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    device: info?.device ?? '',
    description: info?.description ?? '',
    isFallbackAdapter:
      info?.isFallbackAdapter ?? (adapter as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter ?? false,
    ...(info?.subgroupMinSize !== undefined ? { subgroupMinSize: info.subgroupMinSize } : {}),
    ...(info?.subgroupMaxSize !== undefined ? { subgroupMaxSize: info.subgroupMaxSize } : {}),
  };

  const limits = {} as GpuLimits;
  for (const name of REQUESTED_LIMITS) {
    const value = (device.limits as unknown as Record<string, unknown>)[name];
    limits[name] = typeof value === 'number' ? value : 0;
  }

  const features: GpuFeatures = {
    f16: device.features.has('shader-f16'),
    subgroups: device.features.has('subgroups'),
    timestamps: device.features.has('timestamp-query'),
  };

  // A copy: the kernel choices must not change under a live device (and a proxied GPU object may not have the set).
  const wgslLanguageFeatures: ReadonlySet<string> = new Set(gpu.wgslLanguageFeatures ?? []);
  return new DeviceContext(adapter, device, features, limits, adapterInfo, wgslLanguageFeatures);
}

class DeviceContext implements GpuContext {
  readonly lost: Promise<GpuLostInfo>;
  private lostInfo: GpuLostInfo | null = null;
  private readonly kept: GpuError[] = [];
  private count = 0;
  private unreported: GpuError | null = null;
  private readonly listeners = new Set<(error: GpuError) => void>();

  constructor(
    readonly adapter: GPUAdapter,
    readonly device: GPUDevice,
    readonly features: GpuFeatures,
    readonly limits: GpuLimits,
    readonly adapterInfo: GpuAdapterSummary,
    readonly wgslLanguageFeatures: ReadonlySet<string>,
  ) {
    this.lost = device.lost.then((info) => {
      this.lostInfo = { reason: info.reason, message: info.message };
      return this.lostInfo;
    });
    device.addEventListener('uncapturederror', (event) => {
      const error = gpuErrorFromWebGpu((event as GPUUncapturedErrorEvent).error, 'uncaptured');
      this.count += 1;
      if (this.kept.length < MAX_KEPT_UNCAPTURED_ERRORS) this.kept.push(error);
      this.unreported ??= error;
      if (this.listeners.size === 0) console.error(`[webgpu-responses] ${error.message}`);
      for (const listener of this.listeners) listener(error);
    });
  }

  get isLost(): boolean {
    return this.lostInfo !== null;
  }

  get uncapturedErrors(): readonly GpuError[] {
    return this.kept;
  }

  get uncapturedErrorCount(): number {
    return this.count;
  }

  throwIfFailed(): void {
    if (this.lostInfo) {
      throw new GpuError(
        'device-lost',
        `The GPU device was lost (${this.lostInfo.reason}): ${this.lostInfo.message || 'no message'}`,
      );
    }
    const error = this.unreported;
    if (error) {
      this.unreported = null;
      throw error;
    }
  }

  onUncapturedError(listener: (error: GpuError) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  destroy(): void {
    this.device.destroy();
  }
}

/**
 * What a rejected GPU operation means: a WebGPU promise (mapAsync, onSubmittedWorkDone) rejects with a DOMException
 * when its device is destroyed or lost, and the device's `lost` promise can settle a moment after that rejection. Such
 * a rejection is the lost device's GpuError ('device-lost') once `lost` settles, waited for up to `waitMs`; any other
 * error is returned as it is.
 */
export async function lostDeviceError(
  error: unknown,
  ctx: Pick<GpuContext, 'isLost' | 'lost'> | null | undefined,
  waitMs = 1000,
): Promise<unknown> {
  if (error instanceof GpuError || typeof DOMException === 'undefined' || !(error instanceof DOMException) || !ctx) return error;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const lost =
    ctx.isLost ||
    (await Promise.race([ctx.lost.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)))]));
  clearTimeout(timer);
  return lost ? new GpuError('device-lost', `The GPU device was lost (${error.name}: ${error.message})`, { cause: error }) : error;
}

/** Converts a WebGPU `GPUError` into a `GpuError` with the matching code; `where` says what was being done. */
export function gpuErrorFromWebGpu(error: GPUError, where: string): GpuError {
  const kind = error.constructor?.name ?? '';
  const code: GpuErrorCode =
    kind === 'GPUOutOfMemoryError' ? 'out-of-memory' : kind === 'GPUInternalError' ? 'internal' : 'validation';
  return new GpuError(code, `WebGPU ${code} error (${where}): ${error.message}`, { cause: error });
}

/**
 * Runs `create` inside out-of-memory and validation error scopes and throws a `GpuError` ('out-of-memory' or
 * 'validation') if it failed: use it for large allocations (weights, KV cache) so a failure is a clear error
 * at the point of allocation instead of an uncaptured error later.
 */
export async function withGpuErrorCheck<T>(device: GPUDevice, what: string, create: () => T): Promise<T> {
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  let result: T;
  try {
    result = create();
  } finally {
    const oom = await device.popErrorScope();
    const validation = await device.popErrorScope();
    const error = oom ?? validation;
    // `result` is only read below when `create` returned.
    if (error) throw gpuErrorFromWebGpu(error, what);
  }
  return result;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
