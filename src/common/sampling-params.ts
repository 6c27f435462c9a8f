// How the next token is drawn: the Responses layer fills it from the request, the GPU sampler applies it.

export interface SamplingParams {
  /** 0 means greedy. */
  temperature: number;
  top_p: number;
  top_k?: number;
  min_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  logit_bias?: Record<number, number>;
  seed?: number;
  /** Number of top alternatives to report per token (0 = none). */
  top_logprobs?: number;
}
