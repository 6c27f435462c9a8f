// The real-size bench (bench/real-sizes, `npm run check:real-sizes`) has a shape for every catalog model, and
// each shape is the catalog file's: its architecture and quantization, and for the Q8_0 files (one type
// throughout, so the size follows from the shape) about the catalog's file size.
import { describe, expect, test } from 'vitest';
import { REAL_SIZE_SHAPES } from '../../../bench/real-sizes/shapes.ts';
import { remoteCatalog } from '../../../src/model-store/remote-catalog.ts';
import { WEIGHT_FORMATS } from '../../../src/common/weight-formats.ts';

describe('real-size shapes', () => {
  test('one shape per catalog model, same architecture', () => {
    expect(REAL_SIZE_SHAPES.map((s) => s.id).sort()).toEqual(remoteCatalog.map((e) => e.id).sort());
    for (const s of REAL_SIZE_SHAPES) {
      const entry = remoteCatalog.find((e) => e.id === s.id)!;
      expect(s.options.arch, s.id).toBe(entry.architecture);
      // The catalog id names the quantization (q4_0, q8_0, q4_k_m, mxfp4).
      expect(s.id.replace(/-/g, '_'), s.id).toContain(s.ftype.toLowerCase().replace('_moe', ''));
    }
  });

  test("a Q8_0 shape has about the catalog file's bytes (parameters from the shape)", () => {
    const q8 = WEIGHT_FORMATS.find((f) => f.name === 'Q8_0')!;
    for (const s of REAL_SIZE_SHAPES.filter((x) => x.ftype === 'Q8_0')) {
      const o = s.options;
      const [h, q, kv, f] = [o.hidden!, o.heads! * o.headDim!, o.kvHeads! * o.headDim!, o.intermediate!];
      const params = s.vocab * h + o.layers! * (h * q * 2 + h * kv * 2 + 3 * h * f);
      const bytes = (params / q8.blockElements) * q8.fileBlockBytes;
      const catalog = remoteCatalog.find((e) => e.id === s.id)!.bytes;
      // Within 25%: Qwen's own Qwen2.5-0.5B Q8_0 file (676 MB) is 22% above an all-Q8_0 one (525 MB; its
      // embedding is likely F16); SmolLM2-360M and Qwen3-0.6B are within 1%.
      expect(Math.abs(bytes - catalog) / catalog, s.id).toBeLessThan(0.25);
    }
  });
});
