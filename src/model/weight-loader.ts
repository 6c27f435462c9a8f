// Streams model tensors from their files (GGUF or safetensors byte sources) into GPU buffers: each file is
// read once, in order, chunk by chunk; each chunk's whole rows are converted to the GPU layout
// (tensor-types.ts) and written with queue.writeBuffer. A tensor larger than the device's storage binding
// limit is split into row ranges, one buffer each (a tensor of more than two dimensions, such as experts
// [experts, rows, cols], by whole matrices of its first dimension). Progress is reported in file bytes, per file and overall.
// On any failure every buffer this call created is destroyed before the error propagates.

import { paddedWeightBytes } from '../gpu/dispatch.ts';
import type { ByteSource } from './byte-source.ts';
import { toGpuLayout } from './dequantize.ts';
import type { GgufFile } from './gguf.ts';
import { ggufNameOfHfTensor, hfNormShift, type ModelArch } from './model-config.ts';
import type { SafetensorsCheckpoint } from './safetensors.ts';
import { TENSOR_TYPE_LAYOUTS, fileByteSize, gpuByteSize, type TensorType } from './tensor-types.ts';

/** Where one tensor's bytes are. */
export interface TensorSource {
  name: string;
  type: TensorType;
  /** Rows first (PyTorch order); a row is the last dimension. */
  shape: number[];
  source: ByteSource;
  offset: number;
  byteLength: number;
  /**
   * Added to every value at load (Gemma 3's Hugging Face norms hold w, the decoder uses 1 + w: hfNormShift). Only on
   * vectors, which upload-weights.ts then widens to f32 on the CPU; loadTensorsToGpu refuses it.
   */
  addend?: number;
}

/** A row range of a tensor in one GPU buffer (GPU layout, rows from rowStart on, buffer offset 0). */
export interface GpuTensorPart {
  buffer: GPUBuffer;
  rowStart: number;
  rowCount: number;
}

export interface LoadedTensor {
  name: string;
  /** Type of the data in the GPU buffers (BF16 files become F32, F16 ones too where LoadOptions.widenF16). */
  type: TensorType;
  /** Type in the file. */
  fileType: TensorType;
  shape: number[];
  /** Product of all dimensions but the last (1 for vectors). */
  rows: number;
  /** The last dimension. */
  cols: number;
  /**
   * How many tensors this one holds (1, or the members of a TensorGroup): each part's buffer holds its rows of
   * every member in turn (member j's rows start at byte j · rowCount · bytes per row).
   */
  stacked: number;
  parts: GpuTensorPart[];
}

/**
 * Tensors loaded into shared buffers under one name, so that one dispatch can read them all. Split by rows like
 * any tensor.
 * - 'stacked' (the default): members of the same type and shape (a SwiGLU layer's gate and up); each part holds
 *   the same row range of every member, in member order (LoadedTensor.stacked = the member count).
 * - 'concatenated': members of the same type and row length (q, k and v projections); the rows of one matrix,
 *   member after member.
 */
export interface TensorGroup {
  name: string;
  members: readonly string[];
  layout?: 'stacked' | 'concatenated';
}

export interface LoadProgress {
  /** The file (source name) being read. */
  file: string;
  fileBytesDone: number;
  fileBytesTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Largest buffer per part; defaults to min(maxStorageBufferBindingSize, maxBufferSize). Tests lower it. */
  maxPartBytes?: number;
  /** Extra usage flags for the buffers (STORAGE | COPY_DST always). */
  extraUsage?: GPUBufferUsageFlags;
  /** Tensors to load together (each member at most once; same type and shape). The members' own names are not in the result. */
  groups?: readonly TensorGroup[];
  /**
   * F16 tensors load widened to F32 (twice the bytes; exact). CPU adapters without `shader-f16` run the F32 products
   * faster than the F16 ones on half the bytes (src/gpu/kernel-shapes.ts widenF16Weights). Default false.
   */
  widenF16?: boolean;
  /**
   * Called once every buffer exists, before any byte is written to them (the LoadedTensors' parts are final), for
   * work that needs the buffers but not their contents: the engine builds the decoder (bind groups, pipelines
   * compiled) beside the upload. An exception thrown here stops the load as a failed read would.
   */
  onPlanned?: (tensors: readonly LoadedTensor[]) => void;
}

export interface LoadedWeights {
  tensors: Map<string, LoadedTensor>;
  /** Bytes of GPU buffers created. */
  gpuBytes: number;
  destroy(): void;
}

/** The tensors of a GGUF file, under their GGUF names. */
export function ggufTensorSources(file: GgufFile): TensorSource[] {
  return splitFusedGateUp(file.tensors.map((t) => ({ name: t.name, type: t.type, shape: t.shape, source: file.source, offset: t.offset, byteLength: t.byteLength })));
}

/**
 * The tensors of a safetensors checkpoint, renamed to GGUF names where a mapping exists (per architecture: Gemma 3
 * names its norms its own way), with the addend its norms need (hfNormShift: Gemma 3's 1 + w).
 */
export function safetensorsTensorSources(checkpoint: SafetensorsCheckpoint, arch?: ModelArch): TensorSource[] {
  return splitFusedGateUp(checkpoint.tensors.map((t) => {
    const name = ggufNameOfHfTensor(t.name, arch) ?? t.name;
    const addend = arch && t.shape.length === 1 ? hfNormShift(arch, name) : 0;
    return { name, type: t.type, shape: t.shape, source: t.source, offset: t.offset, byteLength: t.byteLength, ...(addend !== 0 ? { addend } : {}) };
  }));
}

/**
 * phi3's fused feed-forward input: blk.N.ffn_up.weight [2·I, hidden] holding the gate rows, then the up rows
 * (GGUF as llama.cpp's converter writes it; HF `gate_up_proj`), with no ffn_gate beside it and ffn_down
 * [hidden, I]. Split at load into blk.N.ffn_gate.weight and blk.N.ffn_up.weight of I rows each (two byte ranges
 * of the same file: rows are whole blocks), so the decoder stacks them as for any SwiGLU layer.
 */
export function splitFusedGateUp(sources: TensorSource[]): TensorSource[] {
  const names = new Set(sources.map((s) => s.name));
  const byName = new Map(sources.map((s) => [s.name, s]));
  return sources.flatMap((s) => {
    const m = /^blk\.(\d+)\.ffn_up\.weight$/.exec(s.name);
    if (!m || names.has(`blk.${m[1]}.ffn_gate.weight`) || s.shape.length !== 2) return [s];
    const down = byName.get(`blk.${m[1]}.ffn_down.weight`);
    const width = down?.shape.at(-1);
    if (width === undefined || s.shape[0] !== 2 * width || s.byteLength % 2 !== 0) return [s];
    const half = s.byteLength / 2;
    const shape = [width, s.shape[1]!];
    return [
      { ...s, name: `blk.${m[1]}.ffn_gate.weight`, shape, byteLength: half },
      { ...s, name: s.name, shape, offset: s.offset + half, byteLength: half },
    ];
  });
}

/** Pending writes beyond which the loader waits for the queue, so staging memory stays bounded. */
const MAX_UNSETTLED_WRITE_BYTES = 64 << 20;

/** Bytes per row in the file and on the GPU, rows per write group and per part, for a tensor shape and type. */
interface RowLayout {
  rows: number;
  cols: number;
  rowFileBytes: number;
  /** The type the GPU buffers hold. */
  gpuType: TensorType;
  rowGpuBytes: number;
  /** Rows written together so every write is 4-byte aligned (2 for F16 rows of odd length). */
  rowGroup: number;
  /** Rows of one matrix of a tensor with more than two dimensions (1 otherwise): parts hold whole matrices. */
  rowAlign: number;
  rowsPerPart: number;
}

function rowLayout(source: TensorSource, maxPartBytes: number, stacked: number, widenF16: boolean): RowLayout {
  const { name, type, shape } = source;
  const cols = shape.length ? shape[shape.length - 1] : 1;
  const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
  const layout = TENSOR_TYPE_LAYOUTS[type];
  if (cols % layout.blockElements !== 0) {
    throw new Error(`Tensor "${name}": rows of ${cols} elements are not whole ${type} blocks of ${layout.blockElements}`);
  }
  const rowFileBytes = fileByteSize(type, cols);
  if (rowFileBytes * rows !== source.byteLength) {
    throw new Error(`Tensor "${name}": ${type} [${shape.join(', ')}] needs ${rowFileBytes * rows} bytes, the file gives ${source.byteLength}`);
  }
  if (rows * cols === 0) throw new Error(`Tensor "${name}" is empty (shape [${shape.join(', ')}])`);
  const gpuType = type === 'F16' && widenF16 ? 'F32' : layout.gpuType;
  const rowGpuBytes = gpuType === 'F16' ? cols * 2 : gpuByteSize(gpuType, cols);
  const rowGroup = rowGpuBytes % 4 === 0 ? 1 : 2;
  const rowAlign = shape.length > 2 ? shape.slice(1, -1).reduce((a, b) => a * b, 1) : 1;
  return { rows, cols, rowFileBytes, gpuType, rowGpuBytes, rowGroup, rowAlign, rowsPerPart: rowsPerPart(name, rows, rowGpuBytes, rowGroup * rowAlign, maxPartBytes, stacked) };
}

/**
 * Rows per buffer: as many whole row groups (`rowGroup` rows of each of the `stacked` members: a row pair of odd F16
 * rows, or one matrix of an expert tensor) as fit in maxPartBytes.
 */
function rowsPerPart(name: string, rows: number, rowGpuBytes: number, rowGroup: number, maxPartBytes: number, stacked: number): number {
  const groupsPerPart = Math.floor(maxPartBytes / (rowGpuBytes * rowGroup * stacked));
  if (groupsPerPart < 1) {
    const what = rowGroup > 2 ? `one matrix of ${rowGroup} rows (${rowGpuBytes * rowGroup * stacked} bytes on the GPU) is` : `one row (${rowGpuBytes * stacked} bytes on the GPU) is`;
    throw new Error(`Tensor "${name}": ${what} larger than the largest buffer allowed (${maxPartBytes} bytes)`);
  }
  return Math.min(rows, groupsPerPart * rowGroup);
}

/** The buffers of a tensor (or of a group's members together): one per row range. */
function createParts(device: GPUDevice, name: string, layout: RowLayout, stacked: number, usage: GPUBufferUsageFlags, created: GPUBuffer[]): GpuTensorPart[] {
  const parts: GpuTensorPart[] = [];
  for (let rowStart = 0; rowStart < layout.rows; rowStart += layout.rowsPerPart) {
    const rowCount = Math.min(layout.rowsPerPart, layout.rows - rowStart);
    // Padded to 16 bytes: the product kernels read weights as vec4 words (src/gpu/dispatch.ts conventions).
    const size = paddedWeightBytes(stacked * rowCount * layout.rowGpuBytes);
    const label = rowCount === layout.rows ? name : `${name}[rows ${rowStart}..${rowStart + rowCount})`;
    const buffer = device.createBuffer({ label, size, usage });
    created.push(buffer);
    parts.push({ buffer, rowStart, rowCount });
  }
  return parts;
}

/**
 * Cuts one tensor's bytes into rows and writes them into its parts: from row `rowBase` of the parts' rows (a
 * concatenated group's member), as member `member` of stacked parts (0 otherwise).
 */
class TensorWriter {
  private carry: Uint8Array = new Uint8Array(0);
  private rowsDone: number;

  constructor(
    private readonly device: GPUDevice,
    readonly source: TensorSource,
    private readonly layout: RowLayout,
    private readonly parts: readonly GpuTensorPart[],
    private readonly member: number,
    rowBase = 0,
  ) {
    if (rowBase % layout.rowGroup !== 0) throw new Error(`Tensor "${source.name}": its rows would start inside a row pair of its group (F16 rows of odd length)`);
    this.rowsDone = rowBase;
  }

  /** Take the next bytes of the tensor; writes every whole row group they complete. Returns bytes written. */
  push(bytes: Uint8Array, last: boolean): number {
    const { rowFileBytes, rowGpuBytes, rowGroup, rowsPerPart } = this.layout;
    let data = bytes;
    if (this.carry.byteLength) {
      data = new Uint8Array(this.carry.byteLength + bytes.byteLength);
      data.set(this.carry);
      data.set(bytes, this.carry.byteLength);
    }
    const groupFileBytes = rowFileBytes * rowGroup;
    let usable = Math.floor(data.byteLength / groupFileBytes) * groupFileBytes;
    if (last) usable = data.byteLength; // the final (possibly partial) row group
    let written = 0;
    let at = 0;
    while (at < usable) {
      const part = this.parts[Math.floor(this.rowsDone / rowsPerPart)];
      const rowsLeftInPart = part.rowStart + part.rowCount - this.rowsDone;
      const rows = Math.min(rowsLeftInPart, Math.ceil((usable - at) / rowFileBytes));
      const fileBytes = Math.min(rows * rowFileBytes, usable - at);
      let gpu = toGpuLayout(this.source.type, data.subarray(at, at + fileBytes), this.layout.gpuType);
      if (gpu.byteLength % 4 !== 0) {
        const padded = new Uint8Array((gpu.byteLength + 3) & ~3);
        padded.set(gpu);
        gpu = padded;
      }
      const offset = (this.member * part.rowCount + this.rowsDone - part.rowStart) * rowGpuBytes;
      this.device.queue.writeBuffer(part.buffer, offset, gpu as Uint8Array<ArrayBuffer>);
      written += gpu.byteLength;
      this.rowsDone += rows;
      at += fileBytes;
    }
    this.carry = at < data.byteLength ? data.slice(at) : new Uint8Array(0);
    return written;
  }
}

/**
 * The writers of every tensor and the tensors they fill: a plain tensor has its own parts; a group's members
 * share the group's (same type and shape checked).
 */
function planTensors(
  device: GPUDevice,
  sources: readonly TensorSource[],
  groups: readonly TensorGroup[],
  maxPartBytes: number,
  usage: GPUBufferUsageFlags,
  created: GPUBuffer[],
  widenF16: boolean,
): { writers: Map<TensorSource, TensorWriter>; tensors: LoadedTensor[]; tensorOf: Map<TensorSource, LoadedTensor> } {
  const byName = new Map(sources.map((s) => [s.name, s]));
  const writers = new Map<TensorSource, TensorWriter>();
  const tensors: LoadedTensor[] = [];
  const tensorOf = new Map<TensorSource, LoadedTensor>();
  const grouped = new Set<string>();
  for (const group of groups) {
    const members = group.members.map((name) => {
      const s = byName.get(name);
      if (!s) throw new Error(`Tensor group "${group.name}": no tensor "${name}"`);
      if (grouped.has(name)) throw new Error(`Tensor "${name}" is in two groups`);
      grouped.add(name);
      return s;
    });
    if (members.length === 0) throw new Error(`Tensor group "${group.name}" has no members`);
    const first = members[0];
    const concatenated = group.layout === 'concatenated';
    for (const m of members) {
      const same = concatenated ? m.shape.at(-1) === first.shape.at(-1) && m.shape.length === first.shape.length : m.shape.join() === first.shape.join();
      if (m.type !== first.type || !same) {
        throw new Error(`Tensor group "${group.name}": "${m.name}" is ${m.type} [${m.shape.join(', ')}], "${first.name}" is ${first.type} [${first.shape.join(', ')}]`);
      }
    }
    const stacked = concatenated ? 1 : members.length;
    const layouts = members.map((m) => rowLayout(m, maxPartBytes, stacked, widenF16)); // each member's byte length checked
    const rows = concatenated ? layouts.reduce((a, l) => a + l.rows, 0) : layouts[0].rows;
    const layout = { ...layouts[0], rows, rowsPerPart: rowsPerPart(group.name, rows, layouts[0].rowGpuBytes, layouts[0].rowGroup * layouts[0].rowAlign, maxPartBytes, stacked) };
    const parts = createParts(device, group.name, layout, stacked, usage, created);
    const shape = concatenated ? [rows, layout.cols] : [...first.shape];
    const tensor: LoadedTensor = { name: group.name, type: layout.gpuType, fileType: first.type, shape, rows, cols: layout.cols, stacked, parts };
    tensors.push(tensor);
    let rowBase = 0;
    members.forEach((m, j) => {
      writers.set(m, new TensorWriter(device, m, layout, parts, concatenated ? 0 : j, concatenated ? rowBase : 0));
      tensorOf.set(m, tensor);
      rowBase += layouts[j].rows;
    });
  }
  for (const s of sources) {
    if (grouped.has(s.name)) continue;
    const layout = rowLayout(s, maxPartBytes, 1, widenF16);
    const parts = createParts(device, s.name, layout, 1, usage, created);
    const tensor: LoadedTensor = { name: s.name, type: layout.gpuType, fileType: s.type, shape: [...s.shape], rows: layout.rows, cols: layout.cols, stacked: 1, parts };
    tensors.push(tensor);
    writers.set(s, new TensorWriter(device, s, layout, parts, 0));
    tensorOf.set(s, tensor);
  }
  return { writers, tensors, tensorOf };
}

/** The tensors of each byte source, in the order given; throws on a name listed twice or a tensor with an addend. */
function tensorsBySource(sources: readonly TensorSource[]): Map<ByteSource, TensorSource[]> {
  const bySource = new Map<ByteSource, TensorSource[]>();
  const names = new Set<string>();
  for (const s of sources) {
    if (names.has(s.name)) throw new Error(`Tensor "${s.name}" is listed twice`);
    if (s.addend) throw new Error(`Tensor "${s.name}": values with an addend are widened on the CPU (upload-weights.ts), not streamed`);
    names.add(s.name);
    const list = bySource.get(s.source) ?? [];
    list.push(s);
    bySource.set(s.source, list);
  }
  return bySource;
}

/** Throws when two tensors of one file, sorted by offset, share bytes. */
function checkNoOverlap(source: ByteSource, sorted: readonly TensorSource[]): void {
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].offset < sorted[i - 1].offset + sorted[i - 1].byteLength) {
      throw new Error(`${source.name}: tensors "${sorted[i - 1].name}" and "${sorted[i].name}" overlap`);
    }
  }
}

/** A pair of GPU error scopes (out-of-memory, validation) around each step; on failure the open ones are popped. */
class ErrorScopes {
  private open = 0;
  private readonly device: GPUDevice;

  constructor(device: GPUDevice) {
    this.device = device;
  }

  push(): void {
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    this.open += 2;
  }

  /** Pops the last pair; throws naming `what` when either caught an error. */
  async check(what: string): Promise<void> {
    this.open -= 2;
    const validation = await this.device.popErrorScope();
    const memory = await this.device.popErrorScope();
    if (memory) throw new Error(`Not enough GPU memory while ${what}: ${memory.message}`);
    if (validation) throw new Error(`GPU error while ${what}: ${validation.message}`);
  }

  /** Pops every scope still open, ignoring what they hold (the error being thrown says more). */
  async popOpen(): Promise<void> {
    while (this.open > 0) {
      this.open--;
      await this.device.popErrorScope().catch(() => null);
    }
  }
}

/** The state of one loadTensorsToGpu call, across its files. */
interface LoadRun {
  device: GPUDevice;
  options: LoadOptions;
  plan: ReturnType<typeof planTensors>;
  /** Members not yet written, per tensor (a group is complete when all its members are). */
  unfinished: Map<LoadedTensor, number>;
  /** The complete tensors, by name. */
  tensors: Map<string, LoadedTensor>;
  bytesTotal: number;
  bytesDone: number;
  /** Bytes written since the queue last settled. */
  unsettled: number;
}

/** Where the stream of one file is: the writers of its tensors in file order, the one being filled, the file position. */
interface FileCursor {
  writers: TensorWriter[];
  index: number;
  position: number;
  fileBytesDone: number;
}

/** Hands one chunk of a file's stream to the writers of the tensors it holds, skipping the gaps between them. */
function feedChunk(run: LoadRun, cursor: FileCursor, chunk: Uint8Array): void {
  let rest = chunk;
  let stream: TensorWriter | undefined = cursor.writers[cursor.index];
  while (rest.byteLength && stream) {
    const s = stream.source;
    if (cursor.position < s.offset) {
      const skip = Math.min(s.offset - cursor.position, rest.byteLength);
      rest = rest.subarray(skip);
      cursor.position += skip;
      continue;
    }
    const take = Math.min(s.offset + s.byteLength - cursor.position, rest.byteLength);
    const finished = cursor.position + take === s.offset + s.byteLength;
    run.unsettled += stream.push(rest.subarray(0, take), finished);
    rest = rest.subarray(take);
    cursor.position += take;
    cursor.fileBytesDone += take;
    run.bytesDone += take;
    if (finished) {
      const tensor = run.plan.tensorOf.get(s)!;
      const left = (run.unfinished.get(tensor) ?? 1) - 1;
      run.unfinished.set(tensor, left);
      if (left === 0) run.tensors.set(tensor.name, tensor);
      stream = cursor.writers[++cursor.index];
    }
  }
}

/** Streams the tensors of one file (in file order, one stream from the first to the end of the last) to their buffers. */
async function loadSourceTensors(run: LoadRun, scopes: ErrorScopes, source: ByteSource, list: TensorSource[]): Promise<void> {
  const { device, options } = run;
  list.sort((a, b) => a.offset - b.offset);
  checkNoOverlap(source, list);
  const fileBytesTotal = list.reduce((a, s) => a + s.byteLength, 0);
  const start = list[0].offset;
  const end = list[list.length - 1].offset + list[list.length - 1].byteLength;
  const cursor: FileCursor = { writers: list.map((s) => run.plan.writers.get(s)!), index: 0, position: start, fileBytesDone: 0 };
  scopes.push();
  for await (const chunk of source.stream(start, end - start, options.signal)) {
    feedChunk(run, cursor, chunk);
    options.onProgress?.({ file: source.name, fileBytesDone: cursor.fileBytesDone, fileBytesTotal, bytesDone: run.bytesDone, bytesTotal: run.bytesTotal });
    if (run.unsettled > MAX_UNSETTLED_WRITE_BYTES) {
      await device.queue.onSubmittedWorkDone();
      run.unsettled = 0;
    }
    options.signal?.throwIfAborted();
  }
  const incomplete = cursor.writers[cursor.index];
  if (incomplete) throw new Error(`${source.name}: the file ended before tensor "${incomplete.source.name}" was complete`);
  await scopes.check(`writing the tensors of ${source.name}`);
}

/**
 * Load tensors into GPU buffers. Tensors of the same file are read in file order through one stream of
 * that file (one Range request per file for URLs), gaps skipped.
 */
export async function loadTensorsToGpu(device: GPUDevice, sources: readonly TensorSource[], options: LoadOptions = {}): Promise<LoadedWeights> {
  const maxPartBytes = options.maxPartBytes ?? Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | (options.extraUsage ?? 0);
  const created: GPUBuffer[] = [];
  const tensors = new Map<string, LoadedTensor>();
  const bySource = tensorsBySource(sources);
  const scopes = new ErrorScopes(device);
  try {
    scopes.push();
    const plan = planTensors(device, sources, options.groups ?? [], maxPartBytes, usage, created, options.widenF16 ?? false);
    await scopes.check('creating the weight buffers');
    options.onPlanned?.(plan.tensors);
    const unfinished = new Map<LoadedTensor, number>();
    for (const t of plan.tensorOf.values()) unfinished.set(t, (unfinished.get(t) ?? 0) + 1);
    const bytesTotal = sources.reduce((a, s) => a + s.byteLength, 0);
    const run: LoadRun = { device, options, plan, unfinished, tensors, bytesTotal, bytesDone: 0, unsettled: 0 };
    for (const [source, list] of bySource) await loadSourceTensors(run, scopes, source, list);
    await device.queue.onSubmittedWorkDone();
  } catch (error) {
    await scopes.popOpen();
    for (const b of created) b.destroy();
    tensors.clear();
    throw error;
  }
  return {
    tensors,
    gpuBytes: created.reduce((a, b) => a + b.size, 0),
    destroy: () => {
      for (const b of created) b.destroy();
    },
  };
}
