// Files made the way published GGUFs are: F32 test models quantized by llama.cpp's own llama_model_quantize to
// every mix llama-quantize writes (quant-mix-cases.ts), at a width whose rows are whole super-blocks and at one
// whose rows are not (so the mixes hold llama-quantize's per-tensor fallbacks). Each file loads, its tensor
// types are what node-llama-cpp's own reader sees in the file (and the mix is what that width makes), and the
// logits of one prefill of the prompt and llama.cpp's greedy continuation match llama.cpp's: within 0.25 absolute
// at every position, and the argmax equal to llama.cpp's (its greedy token) at >= 90% of the positions.
// (llama.cpp quantizes the activations to 8 bits for these weight types; this engine keeps them in f32.)
import { beforeAll, describe, expect, test } from 'vitest';
import { GGML_TYPE_NAMES, WEIGHT_FORMAT, type WeightFormatName } from '../../src/common/weight-formats.ts';
import { argmax } from '../support/cpu-forward.ts';
import { QUANT_MIX_CASES, QUANT_MIX_PROMPT, type QuantMixFixtureIndex, type QuantMixFtype } from './quant-mix-cases.ts';
import { decoderFromGguf, fetchGguf, maxAbsDiff } from './forward-support.ts';

const LOGIT_TOLERANCE = 0.25;
const GREEDY_AGREEMENT = 0.9;

/** The type a mix is named after (what its big matrices hold where rows allow). */
const BASE_TYPE: Record<QuantMixFtype, WeightFormatName> = {
  Q4_K_M: 'Q4_K', Q4_K_S: 'Q4_K', Q5_K_M: 'Q5_K', Q5_K_S: 'Q5_K', Q3_K_S: 'Q3_K', Q3_K_M: 'Q3_K', Q3_K_L: 'Q3_K', Q2_K: 'Q2_K',
  Q4_0: 'Q4_0', Q4_1: 'Q4_1', Q5_0: 'Q5_0', Q5_1: 'Q5_1', Q6_K: 'Q6_K', Q8_0: 'Q8_0', IQ4_NL: 'IQ4_NL', IQ4_XS: 'IQ4_XS',
};

let index: QuantMixFixtureIndex;
beforeAll(async () => {
  const response = await fetch('/.tmp/quant-mix-fixtures/index.json');
  if (!response.ok) throw new Error('No quant-mix fixtures: run `npx tsx test/gpu/quant-mix-fixtures.ts` (or the vitest globalSetup) first');
  index = (await response.json()) as QuantMixFixtureIndex;
});

describe('llama-quantize mixes against llama.cpp', () => {
  test.each(QUANT_MIX_CASES.map((c) => [c.id, c] as const))('%s', async (id, c) => {
    const fixture = index.cases.find((x) => x.id === id)!;
    const file = await fetchGguf(fixture.gguf);
    // The types this runtime reads are the ones in the file (node-llama-cpp's reader), tensor by tensor.
    const ours = Object.fromEntries(file.tensors.map((t) => [t.name, WEIGHT_FORMAT[t.type].ggmlType]));
    expect(ours).toEqual(fixture.llamaTypes);
    const matrixTypes = new Set(file.tensors.filter((t) => t.shape.length === 2).map((t) => t.type));
    const superBlockTypes = [...matrixTypes].filter((t) => WEIGHT_FORMAT[t].blockElements === 256);
    const base = BASE_TYPE[c.ftype];
    if (c.shape.superBlockRows === 'all') expect(matrixTypes.has(base), `${id} holds ${base}`).toBe(true);
    if (c.shape.superBlockRows === 'some' && WEIGHT_FORMAT[base].blockElements === 256) {
      // The matrices whose rows are not whole super-blocks fell back to a 32-weight format, the others did not.
      for (const t of file.tensors.filter((x) => x.shape.length === 2)) {
        const whole = t.shape[1] % 256 === 0;
        expect(WEIGHT_FORMAT[t.type].blockElements === 256, `${id}: ${t.name} [${t.shape.join(', ')}] is ${t.type}`).toBe(whole);
      }
    }
    if (c.shape.superBlockRows === 'none') {
      // No row is whole super-blocks: llama-quantize fell back to 32-weight formats (or F16) for every matrix.
      expect(superBlockTypes).toEqual([]);
      expect([...matrixTypes].some((t) => WEIGHT_FORMAT[t].blockElements === 32), `${id} holds a 32-weight fallback`).toBe(true);
    }
    for (const t of c.shape.alwaysHolds ?? []) expect(matrixTypes.has(t as WeightFormatName), `${id} holds ${t}`).toBe(true);
    const { decoder, destroy } = await decoderFromGguf(file);
    try {
      const greedy = fixture.llama.greedy;
      const sequence = [...QUANT_MIX_PROMPT, ...greedy.slice(0, -1)];
      const { logits } = await decoder.forward(sequence, { logits: 'all' });
      const diff = maxAbsDiff(logits!, fixture.llama.logits);
      // Greedy agreement at every position: our argmax against llama.cpp's (its greedy token where it continued).
      let agree = 0;
      const ties: string[] = [];
      for (let p = 0; p < sequence.length; p++) {
        const theirs = argmax(fixture.llama.logits[p]);
        const mine = argmax(logits![p]);
        if (mine === theirs) agree++;
        else ties.push((fixture.llama.logits[p][theirs] - fixture.llama.logits[p][mine]).toFixed(3));
      }
      const mix = [...new Set(file.tensors.map((t) => t.type))].map((t) => `${t}:${file.tensors.filter((x) => x.type === t).length}`).join(' ');
      console.log(`quant-mix ${id}: max |GPU - llama.cpp| = ${diff.toFixed(4)} over ${sequence.length} positions; greedy agrees at ${agree}/${sequence.length} (llama.cpp's margin where not: ${ties.join(', ') || '-'}); types ${mix}`);
      expect(diff).toBeLessThan(LOGIT_TOLERANCE);
      expect(agree / sequence.length).toBeGreaterThanOrEqual(GREEDY_AGREEMENT);
    } finally {
      destroy();
    }
  });
});

test('ggml type names cover every id a mix can hold', () => {
  for (const c of index.cases) for (const id of Object.values(c.llamaTypes)) expect(GGML_TYPE_NAMES[id]).toBeDefined();
});
