// Compiles a Grammar (grammar-ir.ts) into a pushdown automaton over UTF-8 bytes: one Thompson NFA per rule,
// whose edges are byte ranges, epsilons or calls (push a return state, enter another rule). Code-point sets
// become UTF-8 byte-range sequences, so the matcher works on the bytes tokens decode to, partial characters
// included. Compilation rejects left recursion and rules that match nothing, and prunes every state that can no
// longer finish its rule, so a live matcher configuration can always be completed. A `without` region becomes
// two marks (enter the region of literal k, leave it): the matcher tracks the literal through the region.
// Cost bound: before building anything, the grammar's size is estimated from its expression tree (bounded
// repetitions multiply, so `(a{1,1000}){1,1000}` is a million copies) and refused above `maxStates`; the build
// then counts states and watches a time budget as a backstop, so no grammar a request sends can take more
// than a bounded amount of memory or time to compile.
import { ConstraintError, ConstraintTooLargeError } from './constraint-error.ts';
import type { CodePointSet, Grammar, GrammarExpr } from './grammar-ir.ts';
import { ANY_CHAR, range, setOfChars, subtract } from './grammar-ir.ts';

/** The cost bounds a compilation runs under. */
export interface CompileBudget {
  /** Most automaton states (estimated before building, counted while building). */
  maxStates: number;
  /** Most milliseconds a compilation may take. */
  maxMillis: number;
}

/**
 * 250k states: a JSON string with maxLength 1000, or a regex `.{0,1000}` inside a custom tool's JSON-escaped
 * input, needs ~10-25k; a 50-tool set ~70k. Compiling 250k states takes ~1 s and ~60 MB.
 */
export const DEFAULT_COMPILE_BUDGET: Readonly<CompileBudget> = { maxStates: 250_000, maxMillis: 3_000 };

/** One shared empty edge list (most states have edges of only one kind), so an empty list costs no object. */
const NO_EDGES = new Int32Array(0);

export interface ByteAutomaton {
  stateCount: number;
  /** Per state: byte edges as flat triples [lo, hi, target, ...]. */
  byteEdges: Int32Array[];
  /** Per state: epsilon targets. */
  epsilons: Int32Array[];
  /** Per state: calls as flat pairs [ruleStartState, returnState, ...]. */
  calls: Int32Array[];
  /** Per state: region marks as flat pairs [target, action]: action k >= 0 enters the region of `excluded[k]`, -1 leaves it. */
  marks: Int32Array[];
  /** The literals `without` regions exclude, as UTF-8 bytes (indexed by a mark's action). */
  excluded: Uint8Array[];
  /** Per state: 1 when it is the final state of a rule. */
  isFinal: Uint8Array;
  /** The start rule's entry and final states. */
  startState: number;
  startFinal: number;
}

/** The UTF-8 byte-range sequences that together match exactly the code points lo..hi (surrogates excluded). */
export function utf8Sequences(lo: number, hi: number): [number, number][][] {
  const out: [number, number][][] = [];
  const parts = subtract(range(lo, hi), range(0xd800, 0xdfff));
  for (let i = 0; i < parts.length; i += 2) splitRange(parts[i], parts[i + 1], out);
  return out;
}

function splitRange(lo: number, hi: number, out: [number, number][][]): void {
  if (lo > hi) return;
  for (const boundary of [0x7f, 0x7ff, 0xffff]) {
    if (lo <= boundary && hi > boundary) {
      splitRange(lo, boundary, out);
      splitRange(boundary + 1, hi, out);
      return;
    }
  }
  if (hi <= 0x7f) {
    out.push([[lo, hi]]);
    return;
  }
  for (let i = 1; i < 4; i++) {
    const mask = (1 << (6 * i)) - 1;
    if ((lo & ~mask) !== (hi & ~mask)) {
      if ((lo & mask) !== 0) {
        splitRange(lo, lo | mask, out);
        splitRange((lo | mask) + 1, hi, out);
        return;
      }
      if ((hi & mask) !== mask) {
        splitRange(lo, (hi & ~mask) - 1, out);
        splitRange(hi & ~mask, hi, out);
        return;
      }
    }
  }
  const a = encodeUtf8(lo);
  const b = encodeUtf8(hi);
  out.push(a.map((x, i) => [x, b[i]]));
}

function encodeUtf8(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
}

class AutomatonBuilder {
  byteEdges: number[][] = [];
  epsilons: number[][] = [];
  calls: number[][] = [];
  marks: number[][] = [];
  excluded: string[] = [];
  ruleOfState: number[] = [];
  ruleStart = new Map<string, number>();
  ruleFinal = new Map<string, number>();
  private currentRule = -1;
  private readonly deadline: number;
  private readonly sequencesOf = new WeakMap<CodePointSet, [number, number][][]>();

  constructor(
    private readonly grammar: Grammar,
    private readonly budget: CompileBudget,
  ) {
    this.deadline = performance.now() + budget.maxMillis;
  }

  /** Throws when the time budget is spent (called every few thousand steps). */
  checkTime(): void {
    if (performance.now() > this.deadline) throw tooSlow(this.budget);
  }

  newState(): number {
    const n = this.byteEdges.length;
    if (n >= this.budget.maxStates) throw tooLarge(this.budget, null);
    if ((n & 4095) === 4095) this.checkTime();
    this.byteEdges.push([]);
    this.epsilons.push([]);
    this.calls.push([]);
    this.marks.push([]);
    this.ruleOfState.push(this.currentRule);
    return this.byteEdges.length - 1;
  }

  build(): void {
    const names = [...this.grammar.rules.keys()];
    names.forEach((name, index) => {
      this.currentRule = index;
      this.ruleStart.set(name, this.newState());
      this.ruleFinal.set(name, this.newState());
    });
    names.forEach((name, index) => {
      this.currentRule = index;
      const end = this.expr(this.grammar.rules.get(name)!, this.ruleStart.get(name)!);
      this.epsilons[end].push(this.ruleFinal.get(name)!);
    });
  }

  /** Adds states for `e` starting at `from`; returns the state reached after it. */
  expr(e: GrammarExpr, from: number): number {
    switch (e.kind) {
      case 'literal': {
        let at = from;
        for (const byte of new TextEncoder().encode(e.text)) {
          const next = this.newState();
          this.byteEdges[at].push(byte, byte, next);
          at = next;
        }
        return at;
      }
      case 'chars':
        return this.charSet(e.set, from);
      case 'seq': {
        let at = from;
        for (const item of e.items) at = this.expr(item, at);
        return at;
      }
      case 'alt': {
        const end = this.newState();
        for (const item of e.items) {
          const start = this.newState();
          this.epsilons[from].push(start);
          this.epsilons[this.expr(item, start)].push(end);
        }
        return end;
      }
      case 'repeat': {
        let at = from;
        for (let i = 0; i < e.min; i++) at = this.expr(e.item, at);
        if (e.max === Infinity) {
          const loop = this.newState();
          this.epsilons[at].push(loop);
          const body = this.newState();
          this.epsilons[loop].push(body);
          this.epsilons[this.expr(e.item, body)].push(loop);
          return loop;
        }
        const end = this.newState();
        for (let i = e.min; i < e.max; i++) {
          if ((i & 1023) === 1023) this.checkTime();
          this.epsilons[at].push(end);
          at = this.expr(e.item, at);
        }
        this.epsilons[at].push(end);
        return end;
      }
      case 'rule': {
        const start = this.ruleStart.get(e.name);
        if (start === undefined) throw new ConstraintError(`Grammar rule '${e.name}' is used but not defined`);
        const ret = this.newState();
        this.calls[from].push(start, ret);
        return ret;
      }
      case 'textWithout':
        return this.textWithout(e.literal, from);
      case 'without': {
        if (e.literal === '') throw new ConstraintError('without needs a non-empty literal');
        let index = this.excluded.indexOf(e.literal);
        if (index < 0) index = this.excluded.push(e.literal) - 1;
        const inside = this.newState();
        this.marks[from].push(inside, index);
        const after = this.newState();
        this.marks[this.expr(e.item, inside)].push(after, -1);
        return after;
      }
    }
  }

  /** One code point from `set`, as UTF-8 byte-range chains sharing the start and end states. */
  charSet(set: CodePointSet, from: number): number {
    const end = this.newState();
    // A repetition builds the same set once per copy: its UTF-8 sequences are computed once.
    let sequences = this.sequencesOf.get(set);
    if (!sequences) {
      sequences = [];
      for (let i = 0; i < set.length; i += 2) sequences.push(...utf8Sequences(set[i], set[i + 1]));
      this.sequencesOf.set(set, sequences);
    }
    {
      for (const sequence of sequences) {
        let at = from;
        sequence.forEach(([lo, hi], k) => {
          const next = k === sequence.length - 1 ? end : this.newState();
          this.byteEdges[at].push(lo, hi, next);
          at = next;
        });
      }
    }
    return end;
  }

  /** Any text not containing `literal` (a KMP automaton over code points), ending in any of its states. */
  textWithout(literal: string, from: number): number {
    const pattern = [...literal].map((c) => c.codePointAt(0)!);
    if (pattern.length === 0) throw new ConstraintError('textWithout needs a non-empty literal');
    // failure function
    const fail = new Array<number>(pattern.length).fill(0);
    for (let i = 1, k = 0; i < pattern.length; i++) {
      while (k > 0 && pattern[i] !== pattern[k]) k = fail[k - 1];
      if (pattern[i] === pattern[k]) k++;
      fail[i] = k;
    }
    const next = (state: number, cp: number): number => {
      let k = state;
      while (k > 0 && pattern[k] !== cp) k = fail[k - 1];
      return pattern[k] === cp ? k + 1 : 0;
    };
    const states = pattern.map(() => this.newState());
    this.epsilons[from].push(states[0]);
    const end = this.newState();
    const distinct = [...new Set(pattern)];
    const patternSet = setOfChars(String.fromCodePoint(...distinct));
    const others = subtract(ANY_CHAR, patternSet);
    states.forEach((state, k) => {
      this.epsilons[state].push(end);
      for (const cp of distinct) {
        const target = next(k, cp);
        if (target < pattern.length) this.connectSet([cp, cp], state, states[target]);
      }
      this.connectSet(others, state, states[0]);
    });
    return end;
  }

  private connectSet(set: CodePointSet, from: number, to: number): void {
    const mid = this.charSet(set, from);
    this.epsilons[mid].push(to);
  }
}

/** Compiles a grammar into a byte-level pushdown automaton; throws ConstraintError for unusable grammars. */
export function compileGrammar(grammar: Grammar, budget: CompileBudget = DEFAULT_COMPILE_BUDGET): ByteAutomaton {
  if (!grammar.rules.has(grammar.start)) throw new ConstraintError(`The grammar has no start rule '${grammar.start}'`, { subject: 'grammar' });
  checkRegionsDoNotNest(grammar);
  checkGrammarSize(grammar, budget);
  const b = new AutomatonBuilder(grammar, budget);
  b.build();
  const n = b.byteEdges.length;
  const names = [...grammar.rules.keys()];
  const startOf = names.map((name) => b.ruleStart.get(name)!);
  const rules: RuleStates = { names, startOf, finalOf: names.map((name) => b.ruleFinal.get(name)!), ruleIndexByStart: new Map(startOf.map((s, i) => [s, i])) };
  const { canFinish, productive } = coReachable(b, rules);
  const startIndex = names.indexOf(grammar.start);
  if (!productive[startIndex]) throw new ConstraintError(`The grammar's start rule '${grammar.start}' cannot match any text`, { subject: 'grammar' });
  const edges = pruneEdges(b, canFinish, productive, rules);
  const isFinal = new Uint8Array(n);
  for (const f of rules.finalOf) isFinal[f] = 1;
  checkNoLeftRecursion(edges, isFinal, rules, () => b.checkTime());
  return {
    stateCount: n,
    ...edges,
    excluded: b.excluded.map((literal) => new TextEncoder().encode(literal)),
    isFinal,
    startState: startOf[startIndex],
    startFinal: rules.finalOf[startIndex],
  };
}

/** Each rule's start and final state, by rule index (the order of the grammar's rules). */
interface RuleStates {
  names: string[];
  startOf: number[];
  finalOf: number[];
  ruleIndexByStart: Map<number, number>;
}

/** The pruned edges of a compiled automaton. */
type AutomatonEdges = Pick<ByteAutomaton, 'byteEdges' | 'epsilons' | 'calls' | 'marks'>;

/**
 * Productive rules and co-reachable states (can reach their rule's final): a backward search from the rules'
 * final states over reversed edges, linear in the edges (a state-order fixpoint needs a pass per level of
 * repetition, since a bounded repetition's end state comes before its copies). A call edge s -> (rule, ret)
 * counts once the rule is productive (its start can finish) and ret can finish, whichever comes second.
 */
function coReachable(b: AutomatonBuilder, rules: RuleStates): { canFinish: Uint8Array; productive: Uint8Array } {
  const canFinish = new Uint8Array(b.byteEdges.length);
  const productive = new Uint8Array(rules.names.length);
  const { predStart, preds } = reversedEdges(b);
  const { callsByReturn, callsByRule } = callIndex(b, rules);
  b.checkTime();
  const work: number[] = [];
  const finish = (s: number) => {
    if (canFinish[s]) return;
    canFinish[s] = 1;
    work.push(s);
  };
  for (const f of rules.finalOf) finish(f);
  for (let steps = 0; work.length > 0; steps++) {
    if ((steps & 65535) === 65535) b.checkTime();
    const t = work.pop()!;
    for (let i = predStart[t]; i < predStart[t + 1]; i++) finish(preds[i]);
    const byRet = callsByReturn.get(t);
    if (byRet) for (let i = 0; i < byRet.length; i += 2) if (productive[byRet[i + 1]]) finish(byRet[i]);
    const rule = rules.ruleIndexByStart.get(t);
    if (rule !== undefined && !productive[rule]) {
      productive[rule] = 1;
      const byRule = callsByRule.get(rule);
      if (byRule) for (let i = 0; i < byRule.length; i += 2) if (canFinish[byRule[i + 1]]) finish(byRule[i]);
    }
  }
  return { canFinish, productive };
}

/** The builder's plain edges (byte, epsilon, mark) reversed, as CSR arrays: state t's predecessors are preds[predStart[t]..predStart[t+1]). */
function reversedEdges(b: AutomatonBuilder): { predStart: Int32Array; preds: Int32Array } {
  const n = b.byteEdges.length;
  const predCount = new Int32Array(n + 1);
  for (let s = 0; s < n; s++) {
    const bytes = b.byteEdges[s];
    for (let i = 2; i < bytes.length; i += 3) predCount[bytes[i]]++;
    for (const t of b.epsilons[s]) predCount[t]++;
    const ms = b.marks[s];
    for (let i = 0; i < ms.length; i += 2) predCount[ms[i]]++;
  }
  const predStart = new Int32Array(n + 1);
  for (let s = 0; s < n; s++) predStart[s + 1] = predStart[s] + predCount[s];
  const preds = new Int32Array(predStart[n]);
  const fill = predStart.slice(0, n);
  for (let s = 0; s < n; s++) {
    const bytes = b.byteEdges[s];
    for (let i = 2; i < bytes.length; i += 3) preds[fill[bytes[i]]++] = s;
    for (const t of b.epsilons[s]) preds[fill[t]++] = s;
    const ms = b.marks[s];
    for (let i = 0; i < ms.length; i += 2) preds[fill[ms[i]]++] = s;
  }
  return { predStart, preds };
}

/** Calls by their return state ([caller, rule, ...]) and by their callee ([caller, return, ...]). */
function callIndex(b: AutomatonBuilder, rules: RuleStates): { callsByReturn: Map<number, number[]>; callsByRule: Map<number, number[]> } {
  const callsByReturn = new Map<number, number[]>();
  const callsByRule = new Map<number, number[]>();
  for (let s = 0; s < b.calls.length; s++) {
    const cs = b.calls[s];
    for (let i = 0; i < cs.length; i += 2) {
      const rule = rules.ruleIndexByStart.get(cs[i])!;
      const ret = cs[i + 1];
      let byRet = callsByReturn.get(ret);
      if (!byRet) callsByReturn.set(ret, (byRet = []));
      byRet.push(s, rule);
      let byRule = callsByRule.get(rule);
      if (!byRule) callsByRule.set(rule, (byRule = []));
      byRule.push(s, ret);
    }
  }
  return { callsByReturn, callsByRule };
}

/** The builder's edges without those into states that cannot finish (or calls of unproductive rules), as typed arrays. */
function pruneEdges(b: AutomatonBuilder, canFinish: Uint8Array, productive: Uint8Array, rules: RuleStates): AutomatonEdges {
  const edges: AutomatonEdges = { byteEdges: [], epsilons: [], calls: [], marks: [] };
  for (let s = 0; s < b.byteEdges.length; s++) {
    const ms: number[] = [];
    for (let i = 0; i < b.marks[s].length; i += 2) if (canFinish[b.marks[s][i]]) ms.push(b.marks[s][i], b.marks[s][i + 1]);
    edges.marks.push(edgeList(ms));
    const bytes: number[] = [];
    const be = b.byteEdges[s];
    for (let i = 0; i < be.length; i += 3) if (canFinish[be[i + 2]]) bytes.push(be[i], be[i + 1], be[i + 2]);
    edges.byteEdges.push(edgeList(bytes));
    edges.epsilons.push(edgeList(b.epsilons[s].filter((t) => canFinish[t])));
    const cs: number[] = [];
    const ce = b.calls[s];
    for (let i = 0; i < ce.length; i += 2) {
      if (productive[rules.ruleIndexByStart.get(ce[i])!] && canFinish[ce[i + 1]]) cs.push(ce[i], ce[i + 1]);
    }
    edges.calls.push(edgeList(cs));
    // Free the builder's lists as they are copied: peak memory stays near one copy of the automaton.
    b.byteEdges[s] = b.epsilons[s] = b.calls[s] = b.marks[s] = [];
  }
  return edges;
}

/** Nullable rules, then left recursion: a rule reaching a call to itself without consuming a byte is refused. */
function checkNoLeftRecursion(edges: AutomatonEdges, isFinal: Uint8Array, rules: RuleStates, checkTime: () => void): void {
  const { names, startOf } = rules;
  const nullable = new Uint8Array(names.length);
  for (let changed = true; changed; ) {
    changed = false;
    checkTime();
    for (let r = 0; r < names.length; r++) {
      if (!nullable[r] && reachesWithoutInput(edges, isFinal, rules, nullable, startOf[r], () => {})) {
        nullable[r] = 1;
        changed = true;
      }
    }
  }
  const leftCalls = names.map((_, r) => {
    const callees = new Set<number>();
    reachesWithoutInput(edges, isFinal, rules, nullable, startOf[r], (callee) => callees.add(callee));
    return callees;
  });
  const colour = new Uint8Array(names.length); // 0 new, 1 on path, 2 done
  const visitRule = (r: number, path: number[]): void => {
    colour[r] = 1;
    for (const callee of leftCalls[r]) {
      if (colour[callee] === 1) {
        const cycle = [...path.slice(path.indexOf(callee)), callee].map((i) => names[i]).join(' -> ');
        throw new ConstraintError(`Left-recursive grammar rule (${cycle}) is not supported; write it with repetition (* or +)`, { subject: 'grammar' });
      }
      if (colour[callee] === 0) visitRule(callee, [...path, callee]);
    }
    colour[r] = 2;
  };
  for (let r = 0; r < names.length; r++) if (colour[r] === 0) visitRule(r, [r]);
}

/**
 * Whether `start` reaches a final state without consuming a byte (through epsilons, marks and calls of nullable
 * rules); `onCall` sees every rule called on the way.
 */
function reachesWithoutInput(edges: AutomatonEdges, isFinal: Uint8Array, rules: RuleStates, nullable: Uint8Array, start: number, onCall: (rule: number) => void): boolean {
  const { epsilons, marks, calls } = edges;
  const seen = new Set<number>([start]);
  const work = [start];
  let reachedFinal = false;
  const visit = (t: number) => {
    if (!seen.has(t)) {
      seen.add(t);
      work.push(t);
    }
  };
  while (work.length) {
    const s = work.pop()!;
    if (isFinal[s]) reachedFinal = true;
    for (const t of epsilons[s]) visit(t);
    for (let i = 0; i < marks[s].length; i += 2) visit(marks[s][i]);
    const cs = calls[s];
    for (let i = 0; i < cs.length; i += 2) {
      const callee = rules.ruleIndexByStart.get(cs[i])!;
      onCall(callee);
      if (nullable[callee]) visit(cs[i + 1]);
    }
  }
  return reachedFinal;
}

function edgeList(values: number[]): Int32Array {
  return values.length === 0 ? NO_EDGES : Int32Array.from(values);
}

/** Approximate heap bytes of a compiled automaton (typed arrays and their object headers). */
export function automatonBytes(a: ByteAutomaton): number {
  let bytes = a.isFinal.byteLength + 64;
  for (const lists of [a.byteEdges, a.epsilons, a.calls, a.marks]) {
    bytes += lists.length * 8;
    for (const list of lists) if (list !== NO_EDGES) bytes += 200 + list.byteLength; // measured: ~260 B a state in V8
  }
  return bytes;
}

function tooLarge(budget: CompileBudget, estimate: number | null): ConstraintTooLargeError {
  const size = estimate === null ? 'more than' : 'an estimated more than';
  return new ConstraintTooLargeError(
    `The grammar is too large to compile: it needs ${size} ${budget.maxStates} automaton states (the limit); reduce repetition counts or nesting`,
    { bound: 'states', limit: budget.maxStates },
  );
}

function tooSlow(budget: CompileBudget): ConstraintTooLargeError {
  return new ConstraintTooLargeError(`The grammar is too complex to compile within the ${budget.maxMillis} ms limit; simplify it`, {
    bound: 'time',
    limit: budget.maxMillis,
  });
}

/** Throws ConstraintTooLargeError when `grammar`'s estimated size is above the budget (nothing is built). */
export function checkGrammarSize(grammar: Grammar, budget: CompileBudget = DEFAULT_COMPILE_BUDGET): void {
  const estimate = estimateGrammarStates(grammar, budget.maxStates);
  if (estimate > budget.maxStates) throw tooLarge(budget, estimate);
}

/**
 * An upper bound on the states (and build steps) the builder needs for `grammar`, computed from the expression
 * tree without expanding it: linear in the grammar's text. Saturates a little above `cap`.
 */
export function estimateGrammarStates(grammar: Grammar, cap = DEFAULT_COMPILE_BUDGET.maxStates): number {
  const limit = cap + 1;
  let total = 0;
  for (const expr of grammar.rules.values()) {
    total = Math.min(limit, total + 2 + estimateExprStates(expr, cap));
    if (total >= limit) break;
  }
  return total;
}

/** The states (at least one step per node) the builder spends on `e`, saturating at `cap + 1`. */
export function estimateExprStates(e: GrammarExpr, cap = DEFAULT_COMPILE_BUDGET.maxStates): number {
  const limit = cap + 1;
  const add = (a: number, b: number) => Math.min(limit, a + b);
  const mul = (count: number, each: number) => (count === 0 ? 0 : each > limit / count ? limit : Math.min(limit, count * each));
  const visit = (e: GrammarExpr): number => {
    switch (e.kind) {
      case 'literal':
        return Math.max(1, Math.min(limit, utf8Length(e.text)));
      case 'chars':
        return charSetStates(e.set, limit);
      case 'seq': {
        let sum = 1;
        for (const item of e.items) if ((sum = add(sum, visit(item))) >= limit) break;
        return sum;
      }
      case 'alt': {
        let sum = 1;
        for (const item of e.items) if ((sum = add(sum, 1 + visit(item))) >= limit) break;
        return sum;
      }
      case 'repeat': {
        const each = visit(e.item);
        const copies = e.max === Infinity ? e.min + 1 : e.max;
        // Every bounded repetition is at least one build step, even of an empty item.
        return add(mul(copies, each), add(3, e.max === Infinity ? 0 : mul(e.max - e.min, 1)));
      }
      case 'rule':
        return 1;
      case 'textWithout': {
        const k = [...e.literal].length;
        // Per KMP state: the characters of the literal (up to 4 states each) and one set of all others.
        return mul(k, add(4 * k + 1, charSetStates(ANY_CHAR, limit))) + k + 1;
      }
      case 'without':
        return add(2, visit(e.item));
    }
  };
  return visit(e);
}

/** UTF-8 bytes of `text` (a lone surrogate counts 3, as TextEncoder writes U+FFFD). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return bytes;
}

/** States `charSet` adds for `set`: the end state and each UTF-8 sequence's intermediate states. */
function charSetStates(set: CodePointSet, limit: number): number {
  let states = 1;
  for (let i = 0; i < set.length && states < limit; i += 2) {
    for (const sequence of utf8Sequences(set[i], set[i + 1])) states += sequence.length - 1;
  }
  return Math.min(limit, states);
}

/** A `without` region must not contain another (directly or through the rules it uses): the matcher tracks one literal. */
function checkRegionsDoNotNest(grammar: Grammar): void {
  const containsRegion = (e: GrammarExpr, seen: Set<string>): boolean => {
    switch (e.kind) {
      case 'without':
        return true;
      case 'seq':
      case 'alt':
        return e.items.some((item) => containsRegion(item, seen));
      case 'repeat':
        return containsRegion(e.item, seen);
      case 'rule': {
        if (seen.has(e.name)) return false;
        seen.add(e.name);
        const rule = grammar.rules.get(e.name);
        return rule !== undefined && containsRegion(rule, seen);
      }
      default:
        return false;
    }
  };
  const check = (e: GrammarExpr): void => {
    switch (e.kind) {
      case 'without':
        if (containsRegion(e.item, new Set())) throw new ConstraintError('Exclusion regions (without) cannot nest');
        return;
      case 'seq':
      case 'alt':
        e.items.forEach(check);
        return;
      case 'repeat':
        check(e.item);
        return;
      default:
        return;
    }
  };
  for (const expr of grammar.rules.values()) check(expr);
}
