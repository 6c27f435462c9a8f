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
 * the line kept and one added after it). Every patch the model can produce under it parses AND applies, and it
 * ends within a known token budget.
 */
export function singleLineEditGrammar(fileName: string, text: string, maxLineLength = 100): string {
  const lines = [...new Set(text.split('\n').filter((l) => l.length > 0))];
  if (lines.length === 0) throw new Error('the file has no line to edit');
  const literal = (s: string) => JSON.stringify(s);
  return [
    `start: ${literal(`*** Begin Patch\n*** Update File: ${fileName}\n@@\n-`)} OLD "\\n+" TEXT more? "\\n*** End Patch\\n"`,
    'more: "\\n+" TEXT',
    `OLD: ${lines.map(literal).join(' | ')}`,
    `TEXT: /[^\\n]{0,${maxLineLength}}/`,
    '',
  ].join('\n');
}
