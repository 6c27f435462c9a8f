// Token-level constraints: a compiled grammar (cached by the constraint's key) run against a vocabulary's token
// trie. `allowedMask()` is a bitset over token ids (bit i of word i>>5) of the tokens that keep the output inside
// the language (plus the end tokens when it may end here); masks are cached per matcher state, so a state that
// recurs (inside a JSON string, free text before a tool call) costs a lookup.
import type { ConstraintSpec } from '../../common/constraint-spec.ts';
import { automatonBytes, compileGrammar } from './byte-automaton.ts';
import { ConstraintError } from './constraint-error.ts';
import { type ChatFormatMarkers, type ChatFormatOptions, DEFAULT_MARKERS, type ThinkingMode, grammarForConstraint } from './constraint-grammar.ts';
import { MAX_INTERNED_STATES, type MatcherState, PdaRuntime } from './pda-matcher.ts';
import { type TokenTrie, type Vocabulary, tokenTrieFor } from './token-trie.ts';

export interface TokenConstraint {
  readonly vocabSize: number;
  /** Bitset over token ids: bit (id & 31) of word (id >> 5). Read-only; valid until the next `accept`. */
  allowedMask(): Uint32Array;
  isAllowed(tokenId: number): boolean;
  /** Advances past a sampled token; throws ConstraintError for a token the mask did not allow. */
  accept(tokenId: number): void;
  /** The output so far is complete: an end token was accepted, or nothing more can follow. */
  isComplete(): boolean;
  /** The output so far may end here (an end token is allowed). */
  canEnd(): boolean;
}

export interface CompileOptions {
  /** The chat format's markers (for `kind: 'tools'`); Hermes/Qwen `<tool_call>` and `<think>` by default. */
  markers?: ChatFormatMarkers;
  /** Thinking before a forced tool call (default 'optional': a `<think>…</think>` block may come first). */
  thinking?: ThinkingMode;
  /** The chat format's name (default Hermes/Qwen): the JSON-call formats have their own call grammar. */
  format?: ChatFormatOptions['format'];
}

function chatFormat(options: CompileOptions): ChatFormatOptions {
  const format: ChatFormatOptions = { markers: options.markers ?? DEFAULT_MARKERS, thinking: options.thinking ?? 'optional' };
  // Only a non-Hermes format joins the options (and the cache key), so Hermes keys stay as they were.
  if (options.format !== undefined && options.format !== 'hermes') format.format = options.format;
  return format;
}

// Bounded so a browser tab stays small: at a 152k vocabulary a mask is 19 KB (64 masks per grammar and trie).
const MASK_CACHE_SIZE = 64;
/**
 * The compiled-grammar cache holds at most this many bytes (each entry's automaton, its runtime's interned
 * states and its cached masks, estimated): a few large grammars, or many small ones. An entry alone above it is
 * used but not kept.
 */
export const GRAMMAR_CACHE_BYTES = 64 * 1024 * 1024;

/** A compiled constraint shared by every request with the same key. */
class CompiledConstraint {
  runtime: PdaRuntime;
  /** Masks per trie, keyed by state id of the current runtime (cleared when the runtime is replaced). */
  private masks = new WeakMap<TokenTrie, Map<number, Uint32Array>>();

  /** Bytes of the automaton itself (fixed once compiled). */
  private readonly automatonSize: number;
  /** Bytes of the masks cached now, and of runtimes this entry replaced that live matchers may still use. */
  private maskBytes = 0;

  constructor(readonly automaton: ReturnType<typeof compileGrammar>) {
    this.runtime = new PdaRuntime(automaton);
    this.automatonSize = automatonBytes(automaton);
  }

  /** Approximate heap bytes this entry holds. */
  get approxBytes(): number {
    return this.automatonSize + this.runtime.approxBytes + this.maskBytes;
  }

  /** The runtime new matchers should use (a fresh one once the current has interned too many states). */
  currentRuntime(): PdaRuntime {
    if (this.runtime.internedStates > MAX_INTERNED_STATES) {
      this.runtime = new PdaRuntime(this.automaton);
      this.masks = new WeakMap();
      this.maskBytes = 0;
    }
    return this.runtime;
  }

  maskFor(runtime: PdaRuntime, state: MatcherState, trie: TokenTrie): Uint32Array {
    const cacheable = runtime === this.runtime;
    let byState = this.masks.get(trie);
    if (!byState) this.masks.set(trie, (byState = new Map()));
    if (cacheable) {
      const hit = byState.get(state.id);
      if (hit) {
        byState.delete(state.id);
        byState.set(state.id, hit);
        return hit;
      }
    }
    const mask = computeMask(runtime, state, trie);
    if (cacheable) {
      if (byState.size >= MASK_CACHE_SIZE) {
        const oldest = byState.keys().next().value!;
        this.maskBytes -= byState.get(oldest)!.byteLength;
        byState.delete(oldest);
      }
      byState.set(state.id, mask);
      this.maskBytes += mask.byteLength;
    }
    return mask;
  }
}

/** Subtrees at least this large (in nodes) are checked for a shortcut before they are walked. */
const SHORTCUT_MIN_NODES = 48;

/**
 * Walks the trie depth-first, stepping the matcher per edge and skipping rejected subtrees. Shortcut: when every
 * byte inside a subtree leads the state back to itself (free text, string contents), all its tokens are allowed
 * without walking it.
 */
export function computeMask(runtime: PdaRuntime, state: MatcherState, trie: TokenTrie, shortcutMinNodes = SHORTCUT_MIN_NODES): Uint32Array {
  const mask = new Uint32Array(Math.ceil(trie.vocabSize / 32));
  if (state.accepting) for (const id of trie.endTokenIds) mask[id >> 5] |= 1 << (id & 31);
  const { childStart, childCount, childByte, childNode, tokenStart, tokenIds, subtreeEnd, subtreeBytes } = trie;
  const nodeStack: number[] = [0];
  const stateStack: MatcherState[] = [state];
  while (nodeStack.length > 0) {
    const node = nodeStack.pop()!;
    const at = stateStack.pop()!;
    const first = childStart[node];
    const last = first + childCount[node];
    for (let c = first; c < last; c++) {
      const next = runtime.step(at, childByte[c]);
      if (next === null) continue;
      const child = childNode[c];
      const end = subtreeEnd[child];
      if (end - child >= shortcutMinNodes) {
        const loops = runtime.loopBytes(next);
        let closed = true;
        for (let w = 0; w < 8 && closed; w++) closed = (subtreeBytes[child * 8 + w] & ~loops[w]) === 0;
        if (closed) {
          for (let t = tokenStart[child]; t < tokenStart[end]; t++) {
            const id = tokenIds[t];
            mask[id >> 5] |= 1 << (id & 31);
          }
          continue;
        }
      }
      for (let t = tokenStart[child]; t < tokenStart[child + 1]; t++) {
        const id = tokenIds[t];
        mask[id >> 5] |= 1 << (id & 31);
      }
      if (childCount[child] > 0) {
        nodeStack.push(child);
        stateStack.push(next);
      }
    }
  }
  return mask;
}

/** Most recently used last. */
const compiledCache = new Map<string, CompiledConstraint>();

/** An entry's bytes: its key (the spec's JSON, which can be large) and the compiled constraint. */
function entryBytes(key: string, entry: CompiledConstraint): number {
  return 2 * key.length + entry.approxBytes;
}

/** Evicts least recently used entries until the cache (entries grow as their runtimes intern states) fits `budget`. */
function trimCompiledCache(budget: number): void {
  let total = 0;
  for (const [key, entry] of compiledCache) total += entryBytes(key, entry);
  for (const [key, entry] of compiledCache) {
    if (total <= budget) break;
    total -= entryBytes(key, entry);
    compiledCache.delete(key);
  }
}

/** The compiled-grammar cache's entry count and estimated bytes (for tests and diagnostics). */
export function compiledCacheStats(): { entries: number; bytes: number } {
  let bytes = 0;
  for (const [key, entry] of compiledCache) bytes += entryBytes(key, entry);
  return { entries: compiledCache.size, bytes };
}

function compiledFor(spec: ConstraintSpec, format: ChatFormatOptions): CompiledConstraint {
  const key = JSON.stringify([spec, format]);
  let compiled = compiledCache.get(key);
  if (compiled) {
    compiledCache.delete(key);
    compiledCache.set(key, compiled);
    trimCompiledCache(GRAMMAR_CACHE_BYTES);
    return compiled;
  }
  compiled = new CompiledConstraint(compileGrammar(grammarForConstraint(spec, format)));
  const size = entryBytes(key, compiled);
  if (size <= GRAMMAR_CACHE_BYTES) {
    trimCompiledCache(GRAMMAR_CACHE_BYTES - size);
    compiledCache.set(key, compiled);
  }
  return compiled;
}

/** Throws a ConstraintError if `spec` cannot be compiled (bad schema, unsupported keyword, unparsable grammar). */
export function checkConstraintSpec(spec: ConstraintSpec, options: CompileOptions = {}): void {
  if (spec.kind === 'none') return;
  compiledFor(spec, chatFormat(options));
}

/** Compiles `spec` for `vocab` (compiled grammars are cached; the vocabulary's trie is cached per object). */
export function compileConstraint(spec: ConstraintSpec, vocab: Vocabulary, options: CompileOptions = {}): TokenConstraint {
  const trie = tokenTrieFor(vocab);
  if (spec.kind === 'none') return new UnconstrainedTokens(trie);
  const compiled = compiledFor(spec, chatFormat(options));
  return new GrammarTokenConstraint(compiled, compiled.currentRuntime(), trie);
}

class GrammarTokenConstraint implements TokenConstraint {
  private state: MatcherState;
  private ended = false;
  private mask: Uint32Array | null = null;

  constructor(
    private readonly compiled: CompiledConstraint,
    private readonly runtime: PdaRuntime,
    private readonly trie: TokenTrie,
  ) {
    this.state = runtime.initial;
  }

  get vocabSize(): number {
    return this.trie.vocabSize;
  }

  allowedMask(): Uint32Array {
    if (this.ended) return new Uint32Array(Math.ceil(this.trie.vocabSize / 32));
    this.mask ??= this.compiled.maskFor(this.runtime, this.state, this.trie);
    return this.mask;
  }

  isAllowed(tokenId: number): boolean {
    if (this.ended || tokenId < 0 || tokenId >= this.trie.vocabSize) return false;
    if (this.trie.endTokenIds.includes(tokenId)) return this.state.accepting;
    const bytes = this.trie.tokenBytes[tokenId];
    return bytes.length > 0 && this.runtime.stepBytes(this.state, bytes) !== null;
  }

  accept(tokenId: number): void {
    if (this.ended) throw new ConstraintError(`Token ${tokenId} after the constrained output ended`);
    if (this.trie.endTokenIds.includes(tokenId)) {
      if (!this.state.accepting) throw new ConstraintError(`End token ${tokenId} before the constrained output is complete`);
      this.ended = true;
      this.mask = null;
      return;
    }
    const bytes = this.trie.tokenBytes[tokenId];
    const next = bytes && bytes.length > 0 ? this.runtime.stepBytes(this.state, bytes) : null;
    if (!next) throw new ConstraintError(`Token ${tokenId} is not allowed by the constraint here`);
    this.state = next;
    this.mask = null;
  }

  isComplete(): boolean {
    return this.ended || (this.state.accepting && this.state.configs.length === 0);
  }

  canEnd(): boolean {
    return !this.ended && this.state.accepting;
  }
}

/** `kind: 'none'`: every token allowed. */
class UnconstrainedTokens implements TokenConstraint {
  private ended = false;
  private readonly mask: Uint32Array;

  constructor(private readonly trie: TokenTrie) {
    this.mask = new Uint32Array(Math.ceil(trie.vocabSize / 32)).fill(0xffffffff);
    const tail = trie.vocabSize & 31;
    if (tail) this.mask[this.mask.length - 1] = (1 << tail) - 1;
  }
  get vocabSize(): number {
    return this.trie.vocabSize;
  }
  allowedMask(): Uint32Array {
    return this.mask;
  }
  isAllowed(tokenId: number): boolean {
    return !this.ended && tokenId >= 0 && tokenId < this.trie.vocabSize;
  }
  accept(tokenId: number): void {
    if (this.trie.endTokenIds.includes(tokenId)) this.ended = true;
  }
  isComplete(): boolean {
    return this.ended;
  }
  canEnd(): boolean {
    return !this.ended;
  }
}
