// A tokenizer vocabulary as the constraint engine sees it (token id -> the bytes it decodes to), and a byte trie
// over it in flat typed arrays: tokens that share a prefix share trie nodes, so a mask walk steps each shared
// prefix through the matcher once and skips a whole subtree as soon as its prefix is rejected.

export interface Vocabulary {
  /**
   * Token id -> the bytes it decodes to (a string is taken as its UTF-8). null or empty: a special/control token
   * that constrained text never contains.
   */
  tokens: readonly (Uint8Array | string | null)[];
  /** Tokens that end generation (EOS, `<|im_end|>`, ...): allowed exactly when the constraint can end. */
  endTokenIds: readonly number[];
}

export interface TokenTrie {
  readonly vocabSize: number;
  /** Per node: index of its first child in childByte/childNode, and the count. Node 0 is the root. */
  readonly childStart: Int32Array;
  readonly childCount: Int32Array;
  readonly childByte: Uint8Array;
  readonly childNode: Int32Array;
  /** Per node: the tokens whose bytes end exactly here: tokenIds[tokenStart[n] .. tokenStart[n+1]). */
  readonly tokenStart: Int32Array;
  readonly tokenIds: Int32Array;
  /** Token id -> bytes (empty for tokens constrained text never contains). */
  readonly tokenBytes: readonly Uint8Array[];
  readonly endTokenIds: readonly number[];
  readonly nodeCount: number;
  /**
   * Nodes are numbered in preorder: node n's subtree is nodes n .. subtreeEnd[n] - 1, and its tokens are
   * tokenIds[tokenStart[n] .. tokenStart[subtreeEnd[n]]).
   */
  readonly subtreeEnd: Int32Array;
  /** Per node, 8 words: the set of bytes on the edges inside its subtree (bit b & 31 of word b >> 5). */
  readonly subtreeBytes: Uint32Array;
}

const trieCache = new WeakMap<Vocabulary, TokenTrie>();

export function tokenTrieFor(vocab: Vocabulary): TokenTrie {
  let trie = trieCache.get(vocab);
  if (!trie) trieCache.set(vocab, (trie = buildTokenTrie(vocab)));
  return trie;
}

function buildTokenTrie(vocab: Vocabulary): TokenTrie {
  const encoder = new TextEncoder();
  const tokenBytes = vocab.tokens.map((t) => (t == null ? new Uint8Array(0) : typeof t === 'string' ? encoder.encode(t) : t));
  const ends = new Set(vocab.endTokenIds);
  // Sort token ids by their bytes: a depth-first layout where each node's children are contiguous.
  const ids: number[] = [];
  tokenBytes.forEach((bytes, id) => {
    if (bytes.length > 0 && !ends.has(id)) ids.push(id);
  });
  ids.sort((a, b) => compareBytes(tokenBytes[a], tokenBytes[b]));

  // Build with growable arrays: node -> children map during construction.
  const children: Map<number, number>[] = [new Map()];
  const tokensAt: number[][] = [[]];
  for (const id of ids) {
    let node = 0;
    for (const byte of tokenBytes[id]) {
      let child = children[node].get(byte);
      if (child === undefined) {
        child = children.length;
        children.push(new Map());
        tokensAt.push([]);
        children[node].set(byte, child);
      }
      node = child;
    }
    tokensAt[node].push(id);
  }
  const nodeCount = children.length;
  const childStart = new Int32Array(nodeCount);
  const childCount = new Int32Array(nodeCount);
  const childByte = new Uint8Array(Math.max(0, nodeCount - 1));
  const childNode = new Int32Array(Math.max(0, nodeCount - 1));
  const tokenStart = new Int32Array(nodeCount + 1);
  const tokenIds = new Int32Array(ids.length);
  let c = 0;
  let t = 0;
  for (let n = 0; n < nodeCount; n++) {
    childStart[n] = c;
    const entries = [...children[n].entries()].sort((a, b) => a[0] - b[0]);
    childCount[n] = entries.length;
    for (const [byte, child] of entries) {
      childByte[c] = byte;
      childNode[c] = child;
      c++;
    }
    tokenStart[n] = t;
    for (const id of tokensAt[n]) tokenIds[t++] = id;
  }
  tokenStart[nodeCount] = t;
  // Preorder (tokens were inserted in byte order), so subtrees are contiguous; sizes and byte sets bottom-up.
  const subtreeEnd = new Int32Array(nodeCount);
  const subtreeBytes = new Uint32Array(nodeCount * 8);
  for (let n = nodeCount - 1; n >= 0; n--) {
    let end = n + 1;
    for (let k = childStart[n]; k < childStart[n] + childCount[n]; k++) {
      const child = childNode[k];
      end = Math.max(end, subtreeEnd[child]);
      subtreeBytes[n * 8 + (childByte[k] >> 5)] |= 1 << (childByte[k] & 31);
      for (let w = 0; w < 8; w++) subtreeBytes[n * 8 + w] |= subtreeBytes[child * 8 + w];
    }
    subtreeEnd[n] = end;
  }
  return {
    subtreeEnd,
    subtreeBytes,
    vocabSize: vocab.tokens.length,
    childStart,
    childCount,
    childByte,
    childNode,
    tokenStart,
    tokenIds,
    tokenBytes,
    endTokenIds: [...ends].filter((id) => id >= 0 && id < vocab.tokens.length),
    nodeCount,
  };
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
