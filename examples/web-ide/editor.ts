// The web IDE's code editor: CodeMirror 6 from its npm packages (bundled by vite, so it works offline), one
// EditorState per file (each tab keeps its own text, selection and undo history), TypeScript and Markdown
// highlighting, line numbers, and a mark on the lines the last accepted patch changed. The editor lives in a shadow
// root: CodeMirror's styles then go in through adoptedStyleSheets, which the page's Content-Security-Policy
// (style-src 'self', no inline <style>) allows, where on the document itself they would be a <style> element.
import { EditorState, StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers, type DecorationSet } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { javascript } from '@codemirror/lang-javascript';
import { markdown } from '@codemirror/lang-markdown';

/** Marks these lines (1-based) as changed by a patch; an empty list clears the marks. */
const markLines = StateEffect.define<number[]>();
const changedLine = Decoration.line({ class: 'cm-patched' });
const patchedLines = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    marks = marks.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(markLines)) continue;
      const doc = tr.state.doc;
      marks = Decoration.set(e.value.filter((n) => n >= 1 && n <= doc.lines).map((n) => changedLine.range(doc.line(n).from)));
    }
    // Typing in the editor ends the mark.
    return tr.docChanged && tr.isUserEvent('input') ? Decoration.none : marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});

function language(file: string): Extension {
  if (/\.(ts|tsx|js|mjs)$/.test(file)) return javascript({ typescript: file.endsWith('.ts') || file.endsWith('.tsx') });
  if (file.endsWith('.md')) return markdown();
  return [];
}

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '14px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, monospace', lineHeight: '1.5' },
  '.cm-patched': { backgroundColor: '#2e9d5a2e' },
  '.cm-gutters': { backgroundColor: '#8881', borderRight: '1px solid var(--line)', color: 'inherit', opacity: '0.75' },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: '#4a90e214' },
  '&.cm-focused': { outline: '2px solid var(--accent)', outlineOffset: '-2px' },
});

export interface CodeEditor {
  /** The open file's text. */
  text(): string;
  /** Opens a file (its own state, created from `text` the first time). */
  open(file: string, text: string): void;
  /** Replaces the open file's text as one undoable change, marking the changed lines. */
  replace(text: string, changedLines?: number[]): void;
  /** Forgets a file's state (its next open starts from the text given). */
  forget(file: string): void;
  onChange(listener: (text: string) => void): void;
  view: EditorView;
}

export function createEditor(parent: HTMLElement, label: string): CodeEditor {
  const states = new Map<string, EditorState>();
  const listeners: ((text: string) => void)[] = [];
  let current = '';
  const extensions = (file: string): Extension[] => [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    highlightActiveLine(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    EditorState.tabSize.of(2),
    EditorView.contentAttributes.of({ 'aria-label': `${label}: ${file}` }),
    language(file),
    patchedLines,
    theme,
  ];
  const shadow = parent.attachShadow({ mode: 'open' });
  const host = new CSSStyleSheet();
  host.replaceSync(':host { display: block; overflow: hidden; }');
  shadow.adoptedStyleSheets = [host];
  const view = new EditorView({
    parent: shadow,
    root: shadow,
    dispatchTransactions(trs, v) {
      v.update(trs);
      if (trs.some((t) => t.docChanged)) for (const l of listeners) l(v.state.doc.toString());
    },
  });
  return {
    view,
    text: () => view.state.doc.toString(),
    open(file, text) {
      if (current) states.set(current, view.state);
      current = file;
      view.setState(states.get(file) ?? EditorState.create({ doc: text, extensions: extensions(file) }));
    },
    replace(text, changedLines = []) {
      // The smallest change (common prefix and suffix kept), so the cursor and the rest of the file stay put.
      const old = view.state.doc.toString();
      let from = 0;
      while (from < old.length && from < text.length && old[from] === text[from]) from++;
      let end = 0;
      while (end < old.length - from && end < text.length - from && old[old.length - 1 - end] === text[text.length - 1 - end]) end++;
      view.dispatch({
        changes: { from, to: old.length - end, insert: text.slice(from, text.length - end) },
        effects: markLines.of(changedLines),
        userEvent: 'patch',
      });
      const first = changedLines[0];
      if (first !== undefined && first <= view.state.doc.lines) view.dispatch({ effects: EditorView.scrollIntoView(view.state.doc.line(first).from, { y: 'center' }) });
    },
    forget(file) {
      states.delete(file);
    },
    onChange(listener) {
      listeners.push(listener);
    },
  };
}
