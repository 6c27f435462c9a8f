// The models an engine can serve: each one's id and aliases and where its files are (a ModelSource, opened by
// src/model/open-model.ts), checked once (one of gguf or hfDir, no id or alias twice) and resolved by name.
import { EngineError } from './types.ts';
import type { ModelSource } from '../model/open-model.ts';

export class ModelRegistry {
  private readonly sources: ModelSource[];

  constructor(sources: readonly ModelSource[]) {
    const seen = new Set<string>();
    for (const s of sources) {
      if (!s.gguf === !s.hfDir) throw new Error(`Model "${s.id}": give exactly one of gguf or hfDir`);
      for (const name of [s.id, ...(s.aliases ?? [])]) {
        if (seen.has(name)) throw new Error(`Model id or alias "${name}" is used twice`);
        seen.add(name);
      }
    }
    this.sources = [...sources];
  }

  list(): readonly ModelSource[] {
    return this.sources;
  }

  /** The source a request's `model` names (id or alias); EngineError 404 when none. */
  resolve(name: string): ModelSource {
    const found = this.sources.find((s) => s.id === name || (s.aliases ?? []).includes(name));
    if (!found) {
      throw new EngineError('not_found', `The model \`${name}\` does not exist (available: ${this.sources.map((s) => s.id).join(', ') || 'none'})`, { code: 'model_not_found', param: 'model' });
    }
    return found;
  }
}
