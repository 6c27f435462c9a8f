// The apply_patch format (Codex's file-edit patches) as a Lark grammar, for custom tools whose `format` is
// `{type: "grammar", syntax: "lark", definition}`: the runtime enforces it while decoding, so every call parses.
export const applyPatchLarkGrammar = String.raw`start: "*** Begin Patch" NL operation+ "*** End Patch" NL?

operation: add_file | delete_file | update_file

add_file: "*** Add File: " PATH NL added_line+
added_line: "+" TEXT NL

delete_file: "*** Delete File: " PATH NL

update_file: "*** Update File: " PATH NL move_to? hunk*
move_to: "*** Move to: " PATH NL
hunk: hunk_header hunk_line+ end_of_file?
hunk_header: "@@" NL | "@@ " TEXT NL
hunk_line: (" " | "-" | "+") TEXT NL
end_of_file: "*** End of File" NL

PATH: /[^\s*@+\-][^\n]*/
TEXT: /[^\n]*/
NL: "\n"
`;

/**
 * A narrower patch grammar for one open file: one `Update File` of that file whose hunk replaces exactly one of
 * its existing lines with one or two lines of at most `maxLineLength` characters (a rename, a changed literal, or
 * the line kept and one added after it). The replacement differs from the line it replaces (or the line is kept and
 * one is added), so no patch leaves the file as it was. Every patch the model can produce under it parses, applies
 * AND changes the file, and it ends within a known token budget.
 */
export function singleLineEditGrammar(fileName: string, text: string, maxLineLength = 100): string {
  const lines = [...new Set(text.split('\n').filter((l) => l.length > 0))];
  if (lines.length === 0) throw new Error('the file has no line to edit');
  const literal = (s: string) => JSON.stringify(s);
  const edits = lines.map((line, i) => `${literal(line)} "\\n+" (CHANGED_${i} more? | ${literal(line)} more)`);
  return [
    `start: ${literal(`*** Begin Patch\n*** Update File: ${fileName}\n@@\n-`)} edit "\\n*** End Patch\\n"`,
    `edit: ${edits.join('\n    | ')}`,
    'more: "\\n+" TEXT',
    ...lines.map((line, i) => `CHANGED_${i}: /${otherLineRegex([...line], maxLineLength)}/`),
    `TEXT: /[^\\n]{0,${maxLineLength}}/`,
    '',
  ].join('\n');
}

/** A regular expression for the lines of at most `max` characters other than `line` (its code points): empty where
 * the line is not; else its first character, then a line other than the rest; or another first character, then
 * anything. Characters as \u{…} escapes, so no character of the file needs regex or Lark quoting. */
function otherLineRegex(line: string[], max: number): string {
  const esc = (c: string) => `\\u{${c.codePointAt(0)!.toString(16)}}`;
  if (max <= 0) return line.length === 0 ? '[^\\s\\S]' : '';
  if (line.length === 0) return `[^\\n]{1,${max}}`;
  const [c, ...rest] = line;
  const other = `[^\\n${esc(c)}][^\\n]{0,${max - 1}}`;
  const same = rest.length === 0 && max === 1 ? '' : `|${esc(c)}(?:${otherLineRegex(rest, max - 1)})`;
  return `(?:${other}${same})?`;
}
