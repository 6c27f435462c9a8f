// Fakes the service-worker download tests share: Cache Storage in memory, a file server that answers HTTP Range and
// counts the bytes it sends, and a small GGUF whose header the header check reads (src/model-store/gguf-header-check.ts).
import { encodeGguf, gv, type GgufWriteValue } from '../../tools/make-test-model/gguf-writer.ts';

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.byteLength));
  return out;
}

/** `caches` in memory: each put keeps a copy of the response's bytes and headers. */
export function fakeCaches() {
  const caches = new Map<string, Map<string, Response>>();
  const key = (r: string | Request) => (typeof r === 'string' ? r : r.url);
  return {
    async open(name: string) {
      const entries = caches.get(name) ?? caches.set(name, new Map()).get(name)!;
      return {
        put: async (r: string | Request, response: Response) => void entries.set(key(r), new Response(await response.blob(), { headers: response.headers })),
        match: async (r: string | Request) => entries.get(key(r))?.clone(),
        keys: async () => [...entries.keys()].map((url) => new Request(url)),
        delete: async (r: string | Request) => entries.delete(key(r)),
      };
    },
  };
}

/**
 * A server of `file` that counts the bytes it sends (bodies are pulled in 64 KiB chunks, so a cancelled body stops)
 * and the Range header of each request; `honourRange: false` answers every request with the whole file (200).
 */
export function rangeFileServer(file: Uint8Array, { honourRange = true } = {}) {
  const served = { bytes: 0, requests: [] as (string | null)[] };
  const body = (from: number, to: number) => {
    let at = from;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= to) return controller.close();
        const chunk = file.slice(at, Math.min(to, at + 64 * 1024));
        at += chunk.byteLength;
        served.bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }, { highWaterMark: 0 });
  };
  const handle = (range: string | null): Response => {
    served.requests.push(range);
    const m = range && honourRange ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
    if (m) {
      const from = Number(m[1]);
      const to = m[2] ? Math.min(file.byteLength, Number(m[2]) + 1) : file.byteLength;
      return new Response(body(from, to), { status: 206, headers: { 'content-range': `bytes ${from}-${to - 1}/${file.byteLength}`, 'content-length': String(to - from) } });
    }
    return new Response(body(0, file.byteLength), { status: 200, headers: { 'content-length': String(file.byteLength) } });
  };
  return { served, handle };
}

/** The Range header of a fetch call, from its init or its Request. */
export function rangeOf(input: string | Request, init?: RequestInit): string | null {
  return new Headers(init?.headers ?? (typeof input === 'string' ? undefined : input.headers)).get('range');
}

/**
 * A GGUF with a 6 MiB F32 tensor (the body) and a Q8_0 tensor; optionally an extra tensor of `extraType` (66 bytes:
 * IQ2_XXS, type 16, has no decoder here), a chat template and a big metadata string that grows the header.
 */
export function headerCheckGguf(opts: { arch?: string; extraType?: number; padHeaderBytes?: number; template?: string } = {}): Uint8Array {
  const metadata: Record<string, GgufWriteValue> = { 'general.architecture': gv.str(opts.arch ?? 'llama') };
  if (opts.template) metadata['tokenizer.chat_template'] = gv.str(opts.template);
  if (opts.padHeaderBytes) metadata['general.description'] = gv.str('x'.repeat(opts.padHeaderBytes));
  const tensors = [
    { name: 'token_embd.weight', dims: [1024, 1536], ggmlType: 0, data: new Uint8Array(1024 * 1536 * 4) },
    // Q8_0: 32 weights in 34 bytes.
    { name: 'blk.0.attn_q.weight', dims: [64, 4], ggmlType: 8, data: new Uint8Array(8 * 34) },
  ];
  if (opts.extraType !== undefined) tensors.push({ name: 'blk.0.attn_k.weight', dims: [256, 1], ggmlType: opts.extraType, data: new Uint8Array(66) });
  return concat(encodeGguf(metadata, tensors));
}
