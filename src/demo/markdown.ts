// Markdown for the chat: `marked` (GitHub-flavoured, single newlines kept) turned into HTML, sanitized by
// DOMPurify before it touches the DOM (a model's output is untrusted text), with a copy button on every code block.
// Chat-template markers that a sampled answer may still carry (`<think>`, `</think>`, `<tool_call>`…) are removed
// first so that they never show or parse as tags.
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: true, async: false });

const TEMPLATE_MARKERS = /<\/?(?:think|tool_call|tool_response|tools)>|<\|[a-z_]+\|>/g;

/** The text without chat-template markers. */
export function stripMarkers(text: string): string {
  return text.replace(TEMPLATE_MARKERS, '');
}

/** Sanitized HTML for a markdown text. */
export function markdownToHtml(text: string): string {
  const html = marked.parse(stripMarkers(text)) as string;
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'] });
}

/** Renders markdown into `target` and gives each code block a copy button. */
export function renderMarkdown(target: HTMLElement, text: string): void {
  target.innerHTML = markdownToHtml(text);
  for (const pre of target.querySelectorAll('pre')) {
    const wrap = document.createElement('div');
    wrap.className = 'code-block';
    pre.replaceWith(wrap);
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.className = 'copy';
    copy.textContent = 'Copy';
    copy.setAttribute('aria-label', 'Copy code');
    copy.onclick = async () => {
      try {
        await navigator.clipboard.writeText(pre.textContent ?? '');
        copy.textContent = 'Copied';
      } catch {
        copy.textContent = 'Copy failed';
      }
      setTimeout(() => (copy.textContent = 'Copy'), 1500);
    };
    wrap.append(copy, pre);
  }
  for (const a of target.querySelectorAll('a')) {
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
}
