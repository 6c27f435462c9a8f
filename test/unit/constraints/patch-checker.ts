// An independent, line-based checker for the apply_patch format (no grammar involved): returns the parsed
// operations or the first problem. Used to verify what grammar-constrained walks produce.
export type PatchOperation =
  | { kind: 'add'; path: string; lines: string[] }
  | { kind: 'delete'; path: string }
  | { kind: 'update'; path: string; moveTo?: string; hunks: { header: string; lines: string[] }[] };

export function checkPatch(text: string): { ok: true; operations: PatchOperation[] } | { ok: false; problem: string } {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let i = 0;
  const problem = (p: string) => ({ ok: false as const, problem: `line ${i + 1}: ${p}` });
  if (lines[i++] !== '*** Begin Patch') return problem('expected *** Begin Patch');
  const operations: PatchOperation[] = [];
  const validPath = (p: string) => p.length > 0 && !/^[\s*@+-]/.test(p);
  while (i < lines.length && lines[i] !== '*** End Patch') {
    const line = lines[i];
    if (line.startsWith('*** Add File: ')) {
      const path = line.slice('*** Add File: '.length);
      if (!validPath(path)) return problem('bad path');
      i++;
      const added: string[] = [];
      while (i < lines.length && lines[i].startsWith('+')) added.push(lines[i++].slice(1));
      if (added.length === 0) return problem('an added file needs + lines');
      operations.push({ kind: 'add', path, lines: added });
    } else if (line.startsWith('*** Delete File: ')) {
      const path = line.slice('*** Delete File: '.length);
      if (!validPath(path)) return problem('bad path');
      i++;
      operations.push({ kind: 'delete', path });
    } else if (line.startsWith('*** Update File: ')) {
      const path = line.slice('*** Update File: '.length);
      if (!validPath(path)) return problem('bad path');
      i++;
      const op: Extract<PatchOperation, { kind: 'update' }> = { kind: 'update', path, hunks: [] };
      if (lines[i]?.startsWith('*** Move to: ')) {
        op.moveTo = lines[i].slice('*** Move to: '.length);
        if (!validPath(op.moveTo)) return problem('bad move path');
        i++;
      }
      while (i < lines.length && (lines[i] === '@@' || lines[i].startsWith('@@ '))) {
        const header = lines[i++];
        const body: string[] = [];
        while (i < lines.length && /^[ +-]/.test(lines[i])) body.push(lines[i++]);
        if (body.length === 0) return problem('a hunk needs context, - or + lines');
        if (lines[i] === '*** End of File') i++;
        op.hunks.push({ header, lines: body });
      }
      operations.push(op);
    } else return problem(`unexpected line ${JSON.stringify(line)}`);
  }
  if (lines[i] !== '*** End Patch') return problem('expected *** End Patch');
  if (i !== lines.length - 1) return problem('text after *** End Patch');
  if (operations.length === 0) return problem('no file operations');
  if (!text.endsWith('*** End Patch') && !text.endsWith('*** End Patch\n')) return problem('bad ending');
  return { ok: true, operations };
}
