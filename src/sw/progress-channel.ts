// The BroadcastChannel on which the service worker reports model download/load progress to the pages of its
// origin (src/embed's installResponsesShim listens on it).

export interface ShimProgress {
  phase: 'registering' | 'activating' | 'loading-model' | 'ready';
  /** For `loading-model`: bytes done and total of the file being read. */
  loaded?: number;
  total?: number;
  file?: string;
}

export const progressChannelName = 'webgpu-responses-progress';
