// A web IDE embedding webgpu-responses: the page installs the service worker, then its ordinary `openai` SDK code
// (baseURL: the worker's /v1) runs a small agent loop whose custom tool `apply_patch` edits the open file. The patch
// grammar is sent as the tool's format, so the runtime constrains the model's patches to parse and apply; each
// patch is shown as a diff that the user accepts or rejects before it touches the file, every accepted patch can be
// undone, and Stop ends the run.
import OpenAI from 'openai';
import { installResponsesShim } from '../../src/embed/install-responses-shim';
import { applyPatch } from '../../src/demo/demo-tools';
import { AGENT_GENERATION, agentInstructions, agentTools } from './agent-tools';
import { createEditor } from './editor';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const tabs = $<HTMLDivElement>('tabs');
const fileNameLabel = $<HTMLDivElement>('file-name');
const statusLine = $<HTMLParagraphElement>('status');
const task = $<HTMLTextAreaElement>('task');
const taskForm = $<HTMLFormElement>('task-form');
const runButton = $<HTMLButtonElement>('run');
const stopButton = $<HTMLButtonElement>('stop');
const undoButton = $<HTMLButtonElement>('undo');
const progress = $<HTMLParagraphElement>('progress');
const log = $<HTMLDivElement>('log');
const announcer = $<HTMLDivElement>('announcer');

/** The project: a few files, one open in the editor. */
const files = new Map<string, string>([
  ['src/greet.ts', "export function greet(name: string) {\n  return 'Hello ' + name;\n}\n"],
  ['src/config.ts', 'export const retries = 3;\nexport const timeoutMs = 5000;\nexport const greeting = "Hello";\n'],
  ['README.md', '# Sample project\n\nA tiny project the agent edits.\n'],
]);
let openFile = 'src/greet.ts';

interface UndoEntry {
  file: string;
  before: string;
  after: string;
}
const undoStack: UndoEntry[] = [];

function renderTabs() {
  tabs.replaceChildren(
    ...[...files.keys()].map((name) => {
      const tab = document.createElement('button');
      tab.type = 'button';
      tab.setAttribute('role', 'tab');
      tab.setAttribute('aria-selected', String(name === openFile));
      tab.textContent = name;
      tab.onclick = () => openTab(name);
      return tab;
    }),
  );
}

/** CodeMirror 6 (editor.ts): each file keeps its own editor state and undo history. */
const editor = createEditor($<HTMLDivElement>('editor'), 'File contents');
editor.onChange((text) => files.set(openFile, text));

function openTab(name: string) {
  files.set(openFile, editor.text());
  openFile = name;
  fileNameLabel.textContent = name;
  editor.open(name, files.get(name) ?? '');
  renderTabs();
}

/** Puts a patch's result into the open file's editor (an undoable change there too), marking the changed lines. */
function setEditor(before: string, after: string) {
  const a = before.split('\n');
  const b = after.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let j = 0;
  while (j < a.length - i && j < b.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  const changed = Array.from({ length: Math.max(0, b.length - j - i) }, (_, k) => i + k + 1);
  editor.replace(after, changed);
}

function say(text: string, className = ''): HTMLParagraphElement {
  const p = document.createElement('p');
  p.textContent = text;
  p.className = className;
  log.append(p);
  log.scrollTop = log.scrollHeight;
  return p;
}

function setProgress(text: string, busy: boolean) {
  progress.replaceChildren(text);
  if (busy) progress.append(Object.assign(document.createElement('progress'), { ariaLabel: 'Agent working' }));
}

// ------------------------------------------------------------------ patches: diff, accept or reject, undo

export type Verdict = 'accepted' | 'rejected';
export type Review = (patch: string, file: string, signal?: AbortSignal) => Promise<Verdict>;

/** The lines of a patch's hunks as a diff: removed, added and context lines, with the file line they start at. */
function diffLines(patch: string, before: string): { kind: 'del' | 'add' | 'ctx'; text: string }[] {
  const out: { kind: 'del' | 'add' | 'ctx'; text: string }[] = [];
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) {
      inHunk = true;
      continue;
    }
    if (!inHunk || line.startsWith('***')) continue;
    if (line.startsWith('-')) out.push({ kind: 'del', text: line.slice(1) });
    else if (line.startsWith('+')) out.push({ kind: 'add', text: line.slice(1) });
    else if (line.length > 0) out.push({ kind: 'ctx', text: line.slice(1) });
  }
  const first = out.find((l) => l.kind !== 'add');
  const at = first ? before.split('\n').indexOf(first.text) : -1;
  return out.map((l, i) => ({ ...l, text: `${l.kind === 'del' ? '-' : l.kind === 'add' ? '+' : ' '} ${at >= 0 && i === 0 ? `${at + 1}: ` : ''}${l.text}` }));
}

/** A patch that applies but leaves the file as it was: refused, not "applied". */
class UnchangedPatchError extends Error {
  constructor() {
    super('this patch changes nothing; the + line must differ from the - line.');
  }
}

/** The file after `patch`; throws where the patch does not apply (applyPatch's error) or changes nothing
 *  (UnchangedPatchError). The review card and the scripted review (autoAccept) both refuse through it. */
function changedPatch(before: string, patch: string): string {
  const after = applyPatch(before, patch);
  if (after === before) throw new UnchangedPatchError();
  return after;
}

/**
 * Shows a patch as a diff card in the log with Accept and Reject; resolves with the user's verdict. Accept applies
 * it to the open file (and makes it undoable); a patch that does not apply is reported and counts as rejected.
 */
export const reviewInUi: Review = (patch, file, signal) =>
  new Promise<Verdict>((resolve) => {
    const before = files.get(file) ?? '';
    let after: string | null = null;
    let problem: string | null = null;
    try {
      after = changedPatch(before, patch);
    } catch (e) {
      const { message } = e as Error;
      // The same words, capitalised, as the model hears after "Patch failed: ".
      problem = e instanceof UnchangedPatchError ? `T${message.slice(1)}` : `This patch does not apply: ${message}`;
    }
    const card = document.createElement('article');
    card.className = 'patch';
    card.setAttribute('aria-label', `Patch to ${file}`);
    const header = document.createElement('header');
    const title = document.createElement('span');
    title.textContent = file;
    const actions = document.createElement('span');
    actions.className = 'buttons';
    const accept = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Accept', className: 'accept' });
    const reject = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Reject', className: 'reject' });
    accept.disabled = after === null || problem !== null;
    actions.append(accept, reject);
    header.append(title, actions);
    const diff = document.createElement('pre');
    diff.className = 'diff';
    for (const line of diffLines(patch, before)) {
      const span = document.createElement('span');
      span.className = line.kind;
      span.textContent = line.text;
      diff.append(span);
    }
    card.append(header, diff);
    if (problem) card.append(Object.assign(document.createElement('p'), { className: 'error', textContent: problem }));
    log.append(card);
    log.scrollTop = log.scrollHeight;
    accept.focus();
    setProgress('Waiting for you: accept or reject the patch.', false);
    announcer.textContent = `A patch to ${file} is ready for review.`;
    const finish = (verdict: Verdict) => {
      accept.remove();
      reject.remove();
      actions.append(Object.assign(document.createElement('span'), { className: 'verdict', textContent: verdict === 'accepted' ? 'Accepted' : 'Rejected' }));
      signal?.removeEventListener('abort', onAbort);
      resolve(verdict);
    };
    const onAbort = () => finish('rejected');
    signal?.addEventListener('abort', onAbort, { once: true });
    accept.onclick = () => {
      if (after === null) return;
      files.set(file, after);
      if (file === openFile) setEditor(before, after);
      undoStack.push({ file, before, after });
      undoButton.disabled = false;
      finish('accepted');
    };
    reject.onclick = () => finish('rejected');
  });

const autoAccept: Review = async (patch, file) => {
  const before = files.get(file) ?? '';
  // As the review card refuses it (the model hears why).
  const after = changedPatch(before, patch);
  files.set(file, after);
  if (file === openFile) setEditor(before, after);
  undoStack.push({ file, before, after });
  undoButton.disabled = false;
  return 'accepted';
};

function undo() {
  const entry = undoStack.pop();
  if (!entry) return;
  files.set(entry.file, entry.before);
  if (entry.file !== openFile) {
    editor.forget(entry.file);
    openTab(entry.file);
  } else setEditor(entry.after, entry.before);
  undoButton.disabled = undoStack.length === 0;
  say(`Undid the last patch to ${entry.file}.`);
  announcer.textContent = `Undid the last patch to ${entry.file}.`;
}
undoButton.onclick = undo;

// ------------------------------------------------------------------ the agent

export interface AgentOptions {
  review?: Review;
  signal?: AbortSignal;
  maxSteps?: number;
}

/** Runs the agent: the model may call apply_patch (at most `maxSteps` times) and ends with a message. */
export async function runAgent(client: OpenAI, instruction: string, options: AgentOptions = {}): Promise<{ patches: number; answer: string }> {
  const { review = reviewInUi, signal, maxSteps = 3 } = options;
  files.set(openFile, editor.text());
  const file = openFile;
  let previous: string | undefined;
  let input: OpenAI.Responses.ResponseInput = [
    { role: 'developer', content: agentInstructions(file, files.get(file)!) },
    { role: 'user', content: instruction },
  ];
  let patches = 0;
  for (let step = 0; step < maxSteps; step++) {
    setProgress(`Step ${step + 1} of at most ${maxSteps}: the model is writing…`, true);
    const stream = client.responses.stream(
      {
        model: 'default',
        input,
        tools: agentTools(file, files.get(file) ?? ''),
        tool_choice: step === 0 ? { type: 'custom', name: 'apply_patch' } : 'auto',
        previous_response_id: previous,
        ...AGENT_GENERATION,
      },
      { signal },
    );
    const live = say('');
    let written = 0;
    const grow = (delta: string) => {
      live.textContent += delta;
      written += delta.length;
      setProgress(`Step ${step + 1} of at most ${maxSteps}: the model is writing… ${written} characters`, true);
    };
    stream.on('response.custom_tool_call_input.delta', (e) => grow(e.delta));
    stream.on('response.output_text.delta', (e) => grow(e.delta));
    const response = await stream.finalResponse();
    previous = response.id;
    const calls = response.output.filter((o): o is OpenAI.Responses.ResponseCustomToolCall => o.type === 'custom_tool_call');
    if (calls.length === 0) return { patches, answer: response.output_text };
    // The streamed patch gives way to its diff card.
    live.remove();
    input = [];
    for (const call of calls) {
      let output: string;
      if (call.name !== 'apply_patch') {
        output = `There is no tool named ${call.name}.`;
      } else {
        try {
          const verdict = await review(call.input, file, signal);
          if (verdict === 'accepted') {
            patches++;
            output = 'Patch applied.';
          } else output = 'The user rejected this patch; do not repeat it.';
        } catch (e) {
          output = `Patch failed: ${(e as Error).message}`;
        }
      }
      if (signal?.aborted) throw new DOMException('stopped', 'AbortError');
      say(`apply_patch → ${output}`);
      input.push({ type: 'custom_tool_call_output' as const, call_id: call.call_id, output });
    }
  }
  return { patches, answer: '' };
}

// ------------------------------------------------------------------ start

async function start() {
  renderTabs();
  editor.open(openFile, files.get(openFile)!);
  try {
    // The app's service worker lives at the site root (two folders up); its scope covers /v1/.
    const shim = await installResponsesShim({ serviceWorkerUrl: new URL('../../sw.js', location.href) });
    const client = new OpenAI({ apiKey: 'in-browser', baseURL: shim.baseURL, dangerouslyAllowBrowser: true, maxRetries: 0 });
    let controller: AbortController | null = null;
    Object.assign(window, {
      ideAgent: {
        client,
        /** The agent with every patch accepted (for scripts and tests); the page's button asks the user. */
        runAgent: (text: string) => runAgent(client, text, { review: autoAccept }),
        /** Shows a patch for review exactly as one from the model is shown; resolves with the verdict. */
        proposePatch: (patch: string) => reviewInUi(patch, openFile),
        file: () => editor.text(),
        /** Opens a file's tab. */
        open: (name: string) => openTab(name),
      },
    });
    statusLine.textContent = `Ready (${shim.models.map((m) => m.id).join(', ')})`;
    runButton.disabled = false;
    stopButton.onclick = () => controller?.abort();
    taskForm.onsubmit = async (e) => {
      e.preventDefault();
      if (controller) return;
      controller = new AbortController();
      runButton.disabled = true;
      stopButton.disabled = false;
      try {
        const { patches, answer } = await runAgent(client, task.value, { signal: controller.signal });
        say(`Done: ${patches} patch(es) applied. ${answer}`);
        announcer.textContent = `The agent is done: ${patches} patch(es) applied.`;
      } catch (e) {
        const stopped = controller.signal.aborted || (e as Error).name === 'AbortError' || e instanceof OpenAI.APIUserAbortError;
        say(stopped ? 'Stopped.' : (e as Error).message, stopped ? '' : 'error');
        announcer.textContent = stopped ? 'The agent stopped.' : `The agent failed: ${(e as Error).message}`;
      } finally {
        setProgress('', false);
        controller = null;
        runButton.disabled = false;
        stopButton.disabled = true;
      }
    };
    task.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) {
        e.preventDefault();
        taskForm.requestSubmit();
      }
    });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') controller?.abort();
    });
  } catch (e) {
    statusLine.textContent = (e as Error).message;
    statusLine.className = 'error';
  }
}

void start();
