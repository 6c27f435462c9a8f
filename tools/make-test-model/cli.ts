// Command line of the test-model generator:
//   npx tsx tools/make-test-model/cli.ts --arch qwen3 --type F32 --out <dir> [--seed N] [--layers 2 --hidden 256 ...]
// Writes <dir>/model.gguf and <dir>/hf/ and prints a JSON summary.

import { parseArgs } from 'node:util';
import { SUPPORTED_TENSOR_TYPES, type TensorType } from '../../src/model/tensor-types.ts';
import { readRealTokenizer, TEST_MODEL_ARCHS, writeTestModel, type TestModelArch } from './index.ts';

const { values } = parseArgs({
  options: {
    arch: { type: 'string' },
    'rope-dims': { type: 'string' },
    'longrope-original-context': { type: 'string' },
    type: { type: 'string', default: 'F32' },
    out: { type: 'string' },
    seed: { type: 'string' },
    layers: { type: 'string' },
    hidden: { type: 'string' },
    intermediate: { type: 'string' },
    heads: { type: 'string' },
    'kv-heads': { type: 'string' },
    'head-dim': { type: 'string' },
    merges: { type: 'string' },
    tokenizer: { type: 'string', default: 'bpe' },
    'context-length': { type: 'string' },
    'rope-theta': { type: 'string' },
    'llama3-rope-scaling': { type: 'string' },
    'embedding-type': { type: 'string' },
    'output-type': { type: 'string' },
    tied: { type: 'boolean', default: false },
    shards: { type: 'string' },
    probe: { type: 'boolean', default: false },
    experts: { type: 'string' },
    'expert-type': { type: 'string' },
    'expert-values-of': { type: 'string' },
    'experts-used': { type: 'string' },
    window: { type: 'string' },
    'yarn-factor': { type: 'string' },
    'yarn-original-context': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

function fail(message: string): never {
  console.error(`make-test-model: ${message}`);
  console.error(
    'usage: cli.ts --arch llama|qwen2|qwen3|gpt-oss|phi3|smollm3|gemma3 --type F32|F16|BF16|Q8_0|Q4_0|Q4_K|Q6_K --out DIR [--seed N] [--layers N] [--hidden N]\n' +
      '  [--intermediate N] [--heads N] [--kv-heads N] [--head-dim N] [--merges N] [--tokenizer bpe|spm|DIR] [--context-length N] [--rope-theta X]\n' +
      '  [--llama3-rope-scaling factor,low,high,originalContext]\n' +
      '  [--embedding-type T] [--output-type T] [--tied] [--shards N] [--probe]\n' +
      '  gpt-oss: [--expert-type F32|MXFP4|...] [--expert-values-of MXFP4] [--experts N] [--experts-used N] [--window N] [--yarn-factor X (0: none)] [--yarn-original-context N]; --intermediate is per expert\n' +
      '  phi3: [--rope-dims N] (partial rotary: the q/k dimensions RoPE rotates) [--longrope-original-context N] (LongRoPE factors)\n' +
      '  gemma3: [--window N] (attention.sliding_window of the sliding layers, default 128; every 6th layer is global)',
  );
  process.exit(2);
}

function tensorType(name: string | undefined, flag: string): TensorType | undefined {
  if (name === undefined) return undefined;
  const upper = name.toUpperCase();
  if (!(SUPPORTED_TENSOR_TYPES as readonly string[]).includes(upper)) fail(`${flag} ${name} is not one of ${SUPPORTED_TENSOR_TYPES.join(', ')}`);
  return upper as TensorType;
}

function int(name: string | undefined, flag: string): number | undefined {
  if (name === undefined) return undefined;
  const n = Number(name);
  if (!Number.isInteger(n) || n < 0) fail(`${flag} must be a non-negative integer, got ${name}`);
  return n;
}

/** "factor,lowFreqFactor,highFreqFactor,originalContextLength" */
function llama3RopeScaling(spec: string | undefined) {
  if (spec === undefined) return undefined;
  const n = spec.split(',').map(Number);
  if (n.length !== 4 || n.some((x) => !Number.isFinite(x) || x <= 0)) fail('--llama3-rope-scaling wants factor,lowFreqFactor,highFreqFactor,originalContextLength');
  return { factor: n[0], lowFreqFactor: n[1], highFreqFactor: n[2], originalContextLength: n[3] };
}

if (values.help) fail('help');
if (!values.arch || !(TEST_MODEL_ARCHS as readonly string[]).includes(values.arch)) fail(`--arch must be one of ${TEST_MODEL_ARCHS.join(', ')}`);
if (!values.out) fail('--out is required');

try {
  const model = writeTestModel(
    {
      arch: values.arch as TestModelArch,
      type: tensorType(values.type, '--type')!,
      seed: int(values.seed, '--seed'),
      layers: int(values.layers, '--layers'),
      hidden: int(values.hidden, '--hidden'),
      intermediate: int(values.intermediate, '--intermediate'),
      heads: int(values.heads, '--heads'),
      kvHeads: int(values['kv-heads'], '--kv-heads'),
      headDim: int(values['head-dim'], '--head-dim'),
      ropeDims: int(values['rope-dims'], '--rope-dims'),
      longRopeOriginalContext: int(values['longrope-original-context'], '--longrope-original-context'),
      merges: int(values.merges, '--merges'),
      tokenizer: values.tokenizer === 'spm' ? 'spm' : 'bpe',
      contextLength: int(values['context-length'], '--context-length'),
      ropeTheta: values['rope-theta'] === undefined ? undefined : Number(values['rope-theta']),
      ropeScaling: llama3RopeScaling(values['llama3-rope-scaling']),
      embeddingType: tensorType(values['embedding-type'], '--embedding-type'),
      outputType: tensorType(values['output-type'], '--output-type'),
      tiedEmbeddings: values.tied,
      shards: int(values.shards, '--shards'),
      probe: values.probe,
      experts: int(values.experts, '--experts'),
      expertType: tensorType(values['expert-type'], '--expert-type'),
      expertValuesOf: tensorType(values['expert-values-of'], '--expert-values-of'),
      expertsUsed: int(values['experts-used'], '--experts-used'),
      window: int(values.window, '--window'),
      yarnFactor: values['yarn-factor'] === undefined ? undefined : Number(values['yarn-factor']),
      yarnOriginalContext: int(values['yarn-original-context'], '--yarn-original-context'),
    },
    values.out,
    // --tokenizer <dir>: a real tokenizer.json + tokenizer_config.json (real-tokenizer.ts).
    values.tokenizer === 'bpe' || values.tokenizer === 'spm' ? undefined : readRealTokenizer(values.tokenizer!),
  );
  console.log(JSON.stringify({ ggufPath: model.ggufPath, hfDir: model.hfDir, vocabSize: model.vocabSize, options: model.options }, null, 2));
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
}
