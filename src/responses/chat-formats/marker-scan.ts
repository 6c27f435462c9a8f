// Scanning model output for chat-format markers, shared by the Hermes parser (output-parser.ts) and the JSON-call
// parser (json-calls-parser.ts): the first marker in a text, how much of a text's end could still begin one (held
// back until the next token decides), and a call name as written inside its JSON string.

export function findFirst(text: string, markers: readonly string[]): { index: number; marker: string } | null {
  let best: { index: number; marker: string } | null = null;
  for (const marker of markers) {
    if (!marker) continue;
    const index = text.indexOf(marker);
    if (index >= 0 && (best === null || index < best.index)) best = { index, marker };
  }
  return best;
}

/** How many chars at the end of `text` could be the start of one of the markers. */
export function heldPrefix(text: string, markers: readonly string[]): number {
  let keep = 0;
  for (const marker of markers) {
    for (let k = Math.min(marker.length - 1, text.length); k > keep; k--) {
      if (text.endsWith(marker.slice(0, k))) {
        keep = k;
        break;
      }
    }
  }
  return keep;
}

/** A call's name as the model wrote it inside its JSON string; null when it does not decode (`"\uZZZZ"`). */
export function decodeName(raw: string): string | null {
  try {
    const name: unknown = JSON.parse(`"${raw}"`);
    return typeof name === 'string' ? name : null;
  } catch {
    return null;
  }
}
