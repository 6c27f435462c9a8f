// The model catalog: `models/catalog.json` next to the app lists the bundled model (and may list others by URL),
// each with its size and license; src/model-store/remote-catalog.ts adds real published models by URL. Bundled models ship
// with the app and are stored on first use; the others are downloaded on request (src/model-store/model-manager.ts).
import { z } from 'zod';

export const catalogEntrySchema = z.object({
  id: z.string(),
  aliases: z.array(z.string()).default([]),
  /** Path relative to the app (bundled) or an absolute URL. */
  file: z.string(),
  format: z.enum(['gguf']).default('gguf'),
  bytes: z.number().int().nonnegative(),
  /** `bytes` is a rounded figure (for the quota check and the UI): the size check then uses the server's length. */
  bytesApproximate: z.boolean().default(false),
  sha256: z.string().optional(),
  license: z.string(),
  bundled: z.boolean().default(false),
  description: z.string().default(''),
  /** The GPU memory the model needs (weights, cache and work buffers), in bytes; the model panel shows it. */
  minGpuMemoryBytes: z.number().int().positive().optional(),
  /** The file's general.architecture, as its publisher describes it (the download's header check verifies it). */
  architecture: z.string().optional(),
  /** The chat format its template is expected to write (src/common/chat-format.ts; the header check detects it). */
  expectedFormat: z.enum(['hermes', 'llama3', 'mistral', 'gemma3', 'mistral-v11', 'phi4', 'harmony']).optional(),
});
export type CatalogEntry = z.infer<typeof catalogEntrySchema>;

export async function readModelCatalog(scope: string): Promise<CatalogEntry[]> {
  const url = new URL('models/catalog.json', scope).href;
  const cache = await caches.open('webgpu-responses-models-v1');
  let response = await fetch(url, { cache: 'no-store' }).catch(() => undefined);
  // Kept for offline use; a full quota must not stop the catalog from being read.
  if (response?.ok) await cache.put(url, response.clone()).catch(() => {});
  else response = await cache.match(url);
  if (!response) throw new Error('The model catalog (models/catalog.json) could not be read, online or from the cache.');
  return z.array(catalogEntrySchema).parse(await response.json());
}
