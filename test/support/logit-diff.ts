// The comparison every logits test makes: the largest |a - b| over rows of logits (NaN counts as Infinity, so a NaN
// never passes a tolerance); rows or row lengths that differ are an error, never a smaller maximum.
export function maxAbsDiff(a: ArrayLike<number>[], b: ArrayLike<number>[]): number {
  if (a.length !== b.length) throw new Error(`row counts differ: ${a.length} vs ${b.length}`);
  let max = 0;
  for (let r = 0; r < a.length; r++) {
    if (a[r].length !== b[r].length) throw new Error(`row ${r}: lengths differ: ${a[r].length} vs ${b[r].length}`);
    for (let i = 0; i < a[r].length; i++) {
      const d = Math.abs(a[r][i] - b[r][i]);
      if (!(d <= max)) max = Number.isNaN(d) ? Infinity : d;
    }
  }
  return max;
}
