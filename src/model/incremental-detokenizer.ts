// Incremental detokenization: token ids in, text deltas out. A delta never ends inside a UTF-8 character
// (byte-level BPE and byte-fallback tokens can split one); the held-back bytes come out with the token that
// completes them. Works for any tokenizer by decoding a short window of recent tokens and emitting the new
// suffix, so decoders that depend on context (SentencePiece's leading space) stay right.

export interface TokenDecoder {
  decode(ids: readonly number[]): string;
}

export class IncrementalDetokenizer {
  private readonly ids: number[] = [];
  /** Start of the window that gives context to the next delta. */
  private prefixOffset = 0;
  /** Tokens before this index have been emitted. */
  private readOffset = 0;

  constructor(private readonly tokenizer: TokenDecoder) {}

  /** Add one token; returns the text it completes ('' while a character is incomplete). */
  push(id: number): string {
    this.ids.push(id);
    const prefixText = this.tokenizer.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const fullText = this.tokenizer.decode(this.ids.slice(this.prefixOffset));
    if (fullText.length > prefixText.length && !fullText.endsWith('\uFFFD')) {
      const delta = fullText.slice(prefixText.length);
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
      return delta;
    }
    return '';
  }

  /** At the end of generation: whatever is still held back (an incomplete character decodes to U+FFFD). */
  flush(): string {
    if (this.readOffset === this.ids.length) return '';
    const prefixText = this.tokenizer.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const fullText = this.tokenizer.decode(this.ids.slice(this.prefixOffset));
    this.prefixOffset = this.readOffset = this.ids.length;
    return fullText.slice(prefixText.length);
  }

  /** All token ids pushed so far. */
  get tokens(): readonly number[] {
    return this.ids;
  }
}
