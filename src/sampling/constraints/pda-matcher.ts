// Runs a ByteAutomaton on bytes. A configuration is (automaton state, call stack, guard); stacks are hash-consed
// (one object per distinct stack), so a matcher state -- the closed set of live configurations -- is a plain
// sorted list of configuration ids that is itself interned. Byte transitions between interned states are
// memoized, which lazily builds a DFA over the pushdown automaton: after warm-up, stepping a byte is one map
// lookup, and the token-trie walk that computes a mask mostly hits that memo. The guard is where a configuration
// stands inside a `without` region: 0 outside, else which excluded literal and how much of it the last bytes
// spell (a KMP state); a byte that would complete the literal ends the configuration. It rides along through
// calls and returns, so bytes matched inside called rules count too.
import type { ByteAutomaton } from './byte-automaton.ts';

/** A closed set of live configurations. Identity is meaningful: equal sets are the same object. */
export interface MatcherState {
  readonly id: number;
  /** Configuration ids that have byte edges (the ones a byte can advance). */
  readonly configs: Int32Array;
  /** The input so far is a complete match. */
  readonly accepting: boolean;
  /** Memo: byte -> next state (null = no configuration survives). */
  readonly next: Map<number, MatcherState | null>;
  /** The bytes that lead from this state back to itself (8 words), computed on demand by `loopBytes`. */
  loops: Uint32Array | null;
}

const STACK_ROOT = 0;
/** How many interned states a runtime keeps before new constraints get a fresh runtime. */
export const MAX_INTERNED_STATES = 400_000;

export class PdaRuntime {
  // stacks: node 0 is the empty stack
  private readonly stackRet: number[] = [-1];
  private readonly stackParent: number[] = [-1];
  private readonly stackIds = new Map<number, number>();
  // configurations
  private readonly configState: number[] = [];
  private readonly configStack: number[] = [];
  private readonly configGuard: number[] = [];
  /** Per guard value: (stack, state) key -> configuration id. */
  private readonly configIds: Map<number, number>[];
  // guards: value 0 is outside every region; value regionStart[k] + j is literal k with j bytes matched
  private readonly regionStart: number[];
  /** guard * 256 + byte -> next guard, or -1 when the byte completes the excluded literal. */
  private readonly guardNext: Int32Array;
  // states
  private readonly states = new Map<string, MatcherState>();
  readonly initial: MatcherState;

  constructor(readonly automaton: ByteAutomaton) {
    const tables = guardTables(automaton.excluded);
    this.regionStart = tables.regionStart;
    this.guardNext = tables.next;
    this.configIds = Array.from({ length: tables.values }, () => new Map<number, number>());
    this.initial = this.close([this.configId(automaton.startState, STACK_ROOT)]);
  }

  get internedStates(): number {
    return this.states.size;
  }

  /** Approximate heap bytes this runtime holds (interned states, their memo entries, configurations, stacks). */
  get approxBytes(): number {
    return this.bytes + (this.configState.length + this.stackRet.length) * 48;
  }
  private bytes = 0;

  /** The state after `byte`, or null when no configuration survives. */
  step(state: MatcherState, byte: number): MatcherState | null {
    const memo = state.next.get(byte);
    if (memo !== undefined) return memo;
    const seeds: number[] = [];
    const { byteEdges } = this.automaton;
    for (const config of state.configs) {
      const edges = byteEdges[this.configState[config]];
      const guard = this.configGuard[config];
      const nextGuard = guard === 0 ? 0 : this.guardNext[guard * 256 + byte];
      if (nextGuard < 0) continue;
      for (let i = 0; i < edges.length; i += 3) {
        if (byte >= edges[i] && byte <= edges[i + 1]) seeds.push(this.configId(edges[i + 2], this.configStack[config], nextGuard));
      }
    }
    const next = seeds.length === 0 ? null : this.close(seeds);
    const result = next && (next.configs.length > 0 || next.accepting) ? next : null;
    state.next.set(byte, result);
    this.bytes += 24;
    return result;
  }

  /** The bytes b with step(state, b) === state, as 8 words of bits. */
  loopBytes(state: MatcherState): Uint32Array {
    if (!state.loops) {
      const loops = new Uint32Array(8);
      for (let b = 0; b < 256; b++) if (this.step(state, b) === state) loops[b >> 5] |= 1 << (b & 31);
      state.loops = loops;
    }
    return state.loops;
  }

  /** Steps through `bytes`; null when they leave the language. */
  stepBytes(state: MatcherState, bytes: Uint8Array): MatcherState | null {
    let at: MatcherState | null = state;
    for (let i = 0; i < bytes.length && at; i++) at = this.step(at, bytes[i]);
    return at;
  }

  private stackId(ret: number, parent: number): number {
    const key = ret * 0x4000000 + parent;
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stackRet.length;
      this.stackRet.push(ret);
      this.stackParent.push(parent);
      this.stackIds.set(key, id);
    }
    return id;
  }

  private configId(state: number, stack: number, guard = 0): number {
    const key = stack * 0x4000000 + state;
    const ids = this.configIds[guard];
    let id = ids.get(key);
    if (id === undefined) {
      id = this.configState.length;
      this.configState.push(state);
      this.configStack.push(stack);
      this.configGuard.push(guard);
      ids.set(key, id);
    }
    return id;
  }

  /** Epsilon/call/return closure of the seed configurations, interned. */
  private close(seeds: number[]): MatcherState {
    const { byteEdges, epsilons, calls, marks, isFinal, startFinal } = this.automaton;
    const seen = new Set<number>(seeds);
    const work = [...seeds];
    const kernel: number[] = [];
    let accepting = false;
    while (work.length > 0) {
      const config = work.pop()!;
      const s = this.configState[config];
      const stack = this.configStack[config];
      const guard = this.configGuard[config];
      const push = (id: number) => {
        if (!seen.has(id)) {
          seen.add(id);
          work.push(id);
        }
      };
      if (isFinal[s]) {
        if (stack === STACK_ROOT) {
          if (s === startFinal) accepting = true;
        } else push(this.configId(this.stackRet[stack], this.stackParent[stack], guard));
      }
      for (const t of epsilons[s]) push(this.configId(t, stack, guard));
      const ms = marks[s];
      for (let i = 0; i < ms.length; i += 2) push(this.configId(ms[i], stack, ms[i + 1] < 0 ? 0 : this.regionStart[ms[i + 1]]));
      const cs = calls[s];
      for (let i = 0; i < cs.length; i += 2) push(this.configId(cs[i], this.stackId(cs[i + 1], stack), guard));
      if (byteEdges[s].length > 0) kernel.push(config);
    }
    kernel.sort((a, b) => a - b);
    const key = kernel.join(',') + (accepting ? '!' : '');
    let state = this.states.get(key);
    if (!state) {
      state = { id: this.states.size, configs: Int32Array.from(kernel), accepting, next: new Map(), loops: null };
      this.states.set(key, state);
      this.bytes += 2 * key.length + 4 * kernel.length + 320;
    }
    return state;
  }
}

/**
 * Guard values and their byte transitions for the excluded literals: value 0 is outside every region; literal k
 * owns values regionStart[k] .. regionStart[k] + length - 1 (how many of its bytes the text just read ends with,
 * the KMP state). A transition to the literal's full length is -1: the byte would complete it.
 */
function guardTables(excluded: readonly Uint8Array[]): { values: number; regionStart: number[]; next: Int32Array } {
  const regionStart: number[] = [];
  let values = 1;
  for (const literal of excluded) {
    regionStart.push(values);
    values += literal.length;
  }
  const next = new Int32Array(values * 256);
  excluded.forEach((literal, k) => {
    const fail = new Array<number>(literal.length).fill(0);
    for (let i = 1, j = 0; i < literal.length; i++) {
      while (j > 0 && literal[i] !== literal[j]) j = fail[j - 1];
      if (literal[i] === literal[j]) j++;
      fail[i] = j;
    }
    for (let matched = 0; matched < literal.length; matched++) {
      for (let byte = 0; byte < 256; byte++) {
        let j = matched;
        while (j > 0 && literal[j] !== byte) j = fail[j - 1];
        if (literal[j] === byte) j++;
        next[(regionStart[k] + matched) * 256 + byte] = j === literal.length ? -1 : regionStart[k] + j;
      }
    }
  });
  return { values, regionStart, next };
}
