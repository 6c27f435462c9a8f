// The demo page: a chat over the service worker's /v1/responses. Streaming answers rendered as sanitized markdown,
// collapsible reasoning, tool calls run by the page (only the tools it declares: calculator, get_time, apply_patch
// on an in-page file), phases in words, Stop (button or Escape) that ends the turn cleanly, conversations kept in
// IndexedDB and listed, `truncation: "auto"` so a long conversation keeps going, and with "Store history" unticked
// the page carries the items itself (store:false, encrypted reasoning) so tool loops still finish.
// It talks to the runtime only over HTTP, like any other client.
import { installResponsesShim } from '../embed/install-responses-shim';
import { progressChannelName, type ShimProgress } from '../sw/progress-channel';
import { deleteConversation, listConversations, newConversation, saveConversation, type Conversation, type Message, type Part } from './conversations';
import { demoGenerationFields, type DemoSettings } from './demo-settings';
import { demoFileItem, demoFileName, demoTools, runDemoTool, toolOutputItem, ToolRounds, type DemoToolState } from './demo-tools';
import { markdownToHtml, renderMarkdown, stripMarkers } from './markdown';
import { mountModelPanel } from './model-panel';
import { readServerSentEvents } from './sse';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const statusLine = $<HTMLParagraphElement>('status');
const loadBox = $<HTMLDivElement>('load');
const progressBar = $<HTMLProgressElement>('load-progress');
const loadText = $<HTMLSpanElement>('load-text');
const chat = $<HTMLElement>('chat');
const form = $<HTMLFormElement>('composer');
const prompt = $<HTMLTextAreaElement>('prompt');
const sendButton = $<HTMLButtonElement>('send');
const stopButton = $<HTMLButtonElement>('stop');
const stats = $<HTMLParagraphElement>('stats');
const modelSelect = $<HTMLSelectElement>('model');
const fileView = $<HTMLPreElement>('file');
const announcer = $<HTMLDivElement>('announcer');
const conversationList = $<HTMLUListElement>('conversations');
const settingsForm = $<HTMLFormElement>('settings-form');

const INITIAL_FILE = 'Shopping list\n- bread\n- milk\n';
const toolState: DemoToolState = { file: INITIAL_FILE };
let baseURL = '';
let ready = false;
let conversation: Conversation = newConversation(INITIAL_FILE);
let conversations: Conversation[] = [];

/** The run in progress: its abort controller and the conversation it writes to. */
interface Run {
  controller: AbortController;
  conversation: Conversation;
}
let run: Run | null = null;
/** A stopped run still deciding where the chain continues (the next send waits for it). */
let settling: Promise<void> = Promise.resolve();

// ------------------------------------------------------------------ status and progress

function setStatus(text: string, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

const bytes = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`);

/** Model download/load progress: bytes, percent and an ETA from the rate so far. */
function progressReporter() {
  let started: { at: number; loaded: number; file: string } | null = null;
  return (p: ShimProgress) => {
    if (p.phase !== 'loading-model' || !p.total) return;
    const loaded = p.loaded ?? 0;
    const file = (p.file ?? 'model').split('/').filter(Boolean).slice(-2).join('/');
    if (!started || started.file !== file || loaded < started.loaded) started = { at: performance.now(), loaded, file };
    const elapsed = (performance.now() - started.at) / 1000;
    const rate = elapsed > 0.3 ? (loaded - started.loaded) / elapsed : 0;
    const left = rate > 0 ? Math.max(0, (p.total - loaded) / rate) : null;
    const percent = Math.floor((loaded / p.total) * 100);
    loadBox.hidden = loaded >= p.total;
    progressBar.value = loaded / p.total;
    loadText.textContent =
      `Loading ${file}: ${bytes(loaded)} of ${bytes(p.total)} (${percent}%)` + (left !== null ? ` · about ${Math.ceil(left)} s left` : '');
  };
}

// ------------------------------------------------------------------ rendering

function renderFile() {
  fileView.textContent = toolState.file;
}

const phaseWords: Record<string, string> = { commentary: 'Working', final_answer: 'Answer' };

function messageView(message: Message): HTMLElement {
  const div = document.createElement('article');
  div.className = `turn ${message.role}`;
  if (message.role === 'user') {
    div.setAttribute('aria-label', 'You');
    div.textContent = message.text ?? '';
    return div;
  }
  div.setAttribute('aria-label', 'Assistant');
  const body = document.createElement('div');
  body.className = 'parts';
  div.append(body);
  for (const part of message.parts ?? []) body.append(partView(part));
  const state = document.createElement('p');
  state.className = 'state';
  div.append(state);
  setState(div, message.state ?? 'done');
  return div;
}

function setState(view: HTMLElement, state: NonNullable<Message['state']>) {
  view.classList.toggle('generating', state === 'generating');
  view.setAttribute('aria-busy', String(state === 'generating'));
  const line = view.querySelector<HTMLElement>('.state');
  if (!line) return;
  line.textContent = state === 'generating' ? 'Generating…' : state === 'stopped' ? 'stopped' : '';
  line.hidden = state === 'done' || state === 'error';
}

function partView(part: Part): HTMLElement {
  if (part.kind === 'reasoning') {
    const details = document.createElement('details');
    details.className = 'reasoning';
    const summary = document.createElement('summary');
    summary.textContent = 'Reasoning';
    const text = document.createElement('div');
    text.className = 'text';
    text.textContent = stripMarkers(part.text);
    details.append(summary, text);
    return details;
  }
  if (part.kind === 'tool') {
    const div = document.createElement('div');
    div.className = 'tool';
    const name = document.createElement('b');
    name.textContent = part.name ?? '';
    const input = document.createElement('code');
    input.className = 'text';
    input.textContent = part.text;
    div.append(name, '(', input, ')');
    if (part.output !== undefined) {
      const out = document.createElement('div');
      out.className = 'tool-output';
      out.textContent = `→ ${part.output}`;
      div.append(out);
    }
    return div;
  }
  if (part.kind === 'note') {
    const p = document.createElement('p');
    p.className = part.error ? 'note error' : 'note';
    p.textContent = part.text;
    return p;
  }
  const div = document.createElement('div');
  div.className = 'message';
  if (part.phase && phaseWords[part.phase]) {
    const phase = document.createElement('span');
    phase.className = 'phase';
    phase.dataset.phase = part.phase;
    phase.textContent = phaseWords[part.phase]!;
    div.append(phase);
  }
  const text = document.createElement('div');
  text.className = 'text markdown';
  renderMarkdown(text, part.text);
  div.append(text);
  return div;
}

function renderConversation() {
  chat.replaceChildren(...conversation.messages.map(messageView));
  if (conversation.messages.length === 0) chat.append(emptyHint());
  chat.scrollTop = chat.scrollHeight;
  toolState.file = conversation.file;
  renderFile();
  renderList();
}

function emptyHint(): HTMLElement {
  const p = document.createElement('p');
  p.className = 'empty';
  p.textContent = 'Ask something, e.g. "What is 12 * 7?", "What time is it in Tokyo?" or "Add eggs to notes.txt".';
  return p;
}

function renderList() {
  const items = conversations.map((c) => {
    const li = document.createElement('li');
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'open';
    open.textContent = c.title;
    if (c.id === conversation.id) open.setAttribute('aria-current', 'true');
    open.onclick = () => void switchTo(c);
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'delete';
    remove.textContent = '×';
    remove.setAttribute('aria-label', `Delete conversation ${c.title}`);
    remove.onclick = async () => {
      if (!confirm(`Delete the conversation "${c.title}"?`)) return;
      if (c.id === conversation.id) stopRun();
      await deleteConversation(c.id);
      conversations = conversations.filter((x) => x.id !== c.id);
      if (c.id === conversation.id) startNewChat();
      else renderList();
    };
    li.append(open, remove);
    return li;
  });
  conversationList.replaceChildren(...items);
}

function scrollToEnd() {
  const nearEnd = chat.scrollHeight - chat.scrollTop - chat.clientHeight < 120;
  if (nearEnd) chat.scrollTop = chat.scrollHeight;
}

async function persist(c: Conversation) {
  c.updatedAt = Date.now();
  if (!conversations.includes(c)) conversations.unshift(c);
  conversations.sort((a, b) => b.updatedAt - a.updatedAt);
  if (c === conversation) renderList();
  await saveConversation(c).catch((e: unknown) => console.warn('could not save the conversation', e));
}

// ------------------------------------------------------------------ requests

interface ApiFailure {
  message: string;
  code: string | null;
}

/** A readable line for an OpenAI-shaped error body or anything else that came back. */
async function describeError(response: Response): Promise<ApiFailure> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: string; code?: string | null } };
    if (body.error?.message) return { message: body.error.message, code: body.error.code ?? null };
  } catch {
    /* not JSON */
  }
  return { message: `HTTP ${response.status}: ${text.slice(0, 200)}`, code: null };
}

class TurnError extends Error {
  constructor(readonly failure: ApiFailure) {
    super(failure.message);
  }
}

interface Call {
  type: 'function_call' | 'custom_tool_call';
  call_id: string;
  name: string;
  input: string;
}

interface TurnResult {
  responseId: string | null;
  status: string;
  calls: Call[];
  output: Record<string, unknown>[];
  answered: boolean;
  incompleteReason: string | null;
  /** How many earlier items truncation left out (the response's metadata.truncated_items). */
  truncatedItems: number;
}

function readSettings(): DemoSettings {
  return {
    temperature: Number($<HTMLInputElement>('temperature').value),
    maxOutputTokens: Number($<HTMLInputElement>('max-tokens').value),
    store: $<HTMLInputElement>('store').checked,
    reasoning: $<HTMLInputElement>('reasoning').checked,
    tools: $<HTMLInputElement>('tools').checked,
  };
}

/**
 * The items resent with store:false, within the request's bounds (10,000 items, 8 MB): the server's truncation
 * drops what does not fit the context, but a body too big would be refused before it; past MAX_CARRIED items the
 * oldest whole turns (cut at a user message) stay home.
 */
const MAX_CARRIED = 2000;
function carried(items: unknown[]): unknown[] {
  if (items.length <= MAX_CARRIED) return items;
  const isUser = (i: unknown) => (i as { type?: string; role?: string }).type === 'message' && (i as { role?: string }).role === 'user';
  const from = items.findIndex((i, index) => index >= items.length - MAX_CARRIED && isUser(i));
  return from < 0 ? items : items.slice(from);
}

/** The request body of one turn: chained to the stored response, or carrying the earlier items itself. */
function turnBody(c: Conversation, input: unknown[], settings: DemoSettings, rounds: ToolRounds) {
  const chained = settings.store && c.previousResponseId !== null;
  return {
    ...rounds.requestFields(),
    model: modelSelect.value || undefined,
    input: chained ? input : [...carried(c.items), ...input],
    previous_response_id: chained ? c.previousResponseId : undefined,
    stream: true,
    store: settings.store,
    include: settings.store ? undefined : ['reasoning.encrypted_content'],
    ...demoGenerationFields(settings),
  };
}

/** One turn's stream as it is read: the parts shown live, the repaints waiting for the next frame, and the result so far. */
interface StreamState {
  message: Message;
  partsView: HTMLElement;
  onId: (id: string) => void;
  live: Map<string, { part: Part; el: HTMLElement }>;
  result: TurnResult;
  firstText: number;
  outputTokens: number;
  pending: Set<string>;
  frame: number;
}

/** Repaints the parts whose text changed since the last frame. */
function flushParts(state: StreamState) {
  state.frame = 0;
  for (const id of state.pending) {
    const entry = state.live.get(id);
    if (!entry) continue;
    const fresh = partView(entry.part);
    entry.el.replaceWith(fresh);
    entry.el = fresh;
  }
  state.pending = new Set();
  scrollToEnd();
}

function outputItemAdded(state: StreamState, item: Record<string, any>) {
  const part: Part =
    item.type === 'reasoning'
      ? { kind: 'reasoning', text: '' }
      : item.type === 'message'
        ? { kind: 'text', text: '', phase: item.phase ?? null }
        : { kind: 'tool', text: '', name: item.name };
  state.message.parts!.push(part);
  const el = partView(part);
  state.partsView.append(el);
  state.live.set(item.id, { part, el });
}

function outputDelta(state: StreamState, event: Record<string, any>) {
  if (!state.firstText) state.firstText = performance.now();
  const entry = state.live.get(event.item_id);
  if (!entry) return;
  entry.part.text += event.delta;
  state.pending.add(event.item_id);
  state.frame ||= requestAnimationFrame(() => flushParts(state));
}

function outputItemDone(state: StreamState, item: Record<string, any>) {
  const { result } = state;
  const entry = state.live.get(item.id);
  if (item.type === 'message' && entry) {
    entry.part.phase = item.phase ?? entry.part.phase;
    entry.part.text = (item.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');
    if (entry.part.text.trim() && item.phase !== 'commentary') result.answered = true;
    state.pending.add(item.id);
  }
  if (item.type === 'function_call') result.calls.push({ type: item.type, call_id: item.call_id, name: item.name, input: item.arguments });
  if (item.type === 'custom_tool_call') result.calls.push({ type: item.type, call_id: item.call_id, name: item.name, input: item.input });
  result.output.push(item);
}

/** response.completed, .incomplete or .failed: the response as it ended. */
function responseEnded(state: StreamState, event: Record<string, any>) {
  const { result } = state;
  result.status = event.response.status;
  result.output = event.response.output ?? result.output;
  state.outputTokens = event.response.usage?.output_tokens ?? 0;
  result.truncatedItems = Number(event.response.metadata?.truncated_items ?? 0);
  if (event.type === 'response.incomplete') result.incompleteReason = event.response.incomplete_details?.reason ?? 'incomplete';
  if (event.type === 'response.failed') throw new TurnError({ message: event.response.error?.message ?? 'The engine failed.', code: event.response.error?.code ?? null });
}

/** Applies one streamed event to the turn's state and view. */
function handleStreamEvent(state: StreamState, event: Record<string, any>) {
  switch (event.type) {
    case 'response.created':
      state.result.responseId = event.response.id;
      state.onId(event.response.id);
      break;
    case 'response.output_item.added':
      outputItemAdded(state, event.item);
      break;
    case 'response.output_text.delta':
    case 'response.reasoning_text.delta':
    case 'response.function_call_arguments.delta':
    case 'response.custom_tool_call_input.delta':
      outputDelta(state, event);
      break;
    case 'response.output_item.done':
      outputItemDone(state, event.item);
      break;
    case 'response.completed':
    case 'response.incomplete':
    case 'response.failed':
      responseEnded(state, event);
      break;
    case 'error':
      throw new TurnError({ message: event.error?.message ?? event.message ?? 'The stream failed.', code: event.error?.code ?? event.code ?? null });
  }
}

/** One request/stream: renders events into the assistant message as they come. */
async function streamTurn(c: Conversation, message: Message, view: HTMLElement, input: unknown[], settings: DemoSettings, rounds: ToolRounds, signal: AbortSignal, onId: (id: string) => void): Promise<TurnResult> {
  const body = turnBody(c, input, settings, rounds);
  const started = performance.now();
  const response = await fetch(`${baseURL}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw new TurnError(await describeError(response));

  const state: StreamState = {
    message,
    partsView: view.querySelector<HTMLElement>('.parts')!,
    onId,
    live: new Map(),
    result: { responseId: null, status: 'in_progress', calls: [], output: [], answered: false, incompleteReason: null, truncatedItems: 0 },
    firstText: 0,
    outputTokens: 0,
    pending: new Set(),
    frame: 0,
  };
  for await (const { data } of readServerSentEvents(response.body, signal)) handleStreamEvent(state, JSON.parse(data) as Record<string, any>);
  if (state.frame) cancelAnimationFrame(state.frame);
  flushParts(state);
  if (signal.aborted) throw new DOMException('stopped', 'AbortError');
  const { result, firstText, outputTokens } = state;
  const seconds = (performance.now() - started) / 1000;
  const ttft = firstText ? ((firstText - started) / 1000).toFixed(2) : '–';
  const left = result.truncatedItems ? ` · ${result.truncatedItems} earlier items left out to fit the context` : '';
  stats.textContent = `time to first token ${ttft} s · ${outputTokens} tokens in ${seconds.toFixed(2)} s · ${(outputTokens / seconds).toFixed(1)} tokens/s${left}`;
  return result;
}

/** The words shown when a turn ends without a usable answer, or fails. */
function failureNote(failure: ApiFailure): string {
  if (failure.code === 'context_length_exceeded') {
    return `This message does not fit the model's context, even with the earlier turns left out. Start a New chat, shorten the message, or lower Max output tokens. (${failure.message})`;
  }
  if (failure.code === 'model_not_available' || failure.code === 'model_not_found') return `${failure.message} Pick or download a model under Models.`;
  return failure.message;
}

/** Where a stopped turn's chain continues: the stored cancelled response when it ended cleanly, else the last completed one. */
async function settleStopped(c: Conversation, responseId: string | null, input: unknown[], before: { head: string | null; items: number; fileSent?: string }): Promise<void> {
  const revert = () => {
    c.previousResponseId = before.head;
    c.items.length = before.items;
    c.fileSent = before.fileSent;
  };
  if (!responseId) return revert();
  for (let attempt = 0; attempt < 20; attempt++) {
    const response = await fetch(`${baseURL}/responses/${encodeURIComponent(responseId)}`).catch(() => null);
    if (response?.ok) {
      const stored = (await response.json()) as { status: string; output: { type: string }[] };
      if (stored.status === 'in_progress' || stored.status === 'queued') {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const dangling = stored.output.some((o) => o.type === 'function_call' || o.type === 'custom_tool_call');
      if (dangling) return revert();
      c.previousResponseId = responseId;
      c.items.push(...input, ...stored.output);
      return;
    }
    if (response && response.status === 404) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    return revert();
  }
  revert();
}

/** Shows the user's message and a generating assistant message after it, both added to the conversation. */
function showNewTurn(c: Conversation, text: string): { assistant: Message; view: HTMLElement } {
  const user: Message = { role: 'user', text };
  const assistant: Message = { role: 'assistant', parts: [], state: 'generating' };
  if (c.messages.length === 0) c.title = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  c.messages.push(user, assistant);
  chat.querySelector('.empty')?.remove();
  chat.append(messageView(user));
  const view = messageView(assistant);
  chat.append(view);
  chat.scrollTop = chat.scrollHeight;
  return { assistant, view };
}

/** Runs a turn's tool calls and returns their outputs (the next request's input); only a tool this page declared is ever run. */
function runToolCalls(c: Conversation, assistant: Message, calls: Call[], declared: Set<string>, tools: DemoToolState, rounds: ToolRounds): unknown[] {
  const outputs = calls.map((call) => {
    const output = declared.has(call.name) ? runDemoTool(call.name, call.input, tools) : `Error: there is no tool named ${call.name} here.`;
    c.file = tools.file;
    if (c === conversation) {
      toolState.file = c.file;
      renderFile();
    }
    const toolPart = [...assistant.parts!].reverse().find((p) => p.kind === 'tool' && p.name === call.name && p.output === undefined);
    if (toolPart) toolPart.output = output;
    return output;
  });
  rounds.record(calls, outputs);
  return calls.map((call, i) => toolOutputItem(call, outputs[i]!));
}

/** Sends the user's message and keeps going while the model calls declared tools (ToolRounds: then it answers in words). */
async function converse(text: string) {
  if (run) return;
  await settling;
  if (run) return;
  const c = conversation;
  const settings = readSettings();
  const declared = new Set(settings.tools ? demoTools.map((t) => t.name) : []);
  const { assistant, view } = showNewTurn(c, text);
  const controller = new AbortController();
  const current: Run = { controller, conversation: c };
  run = current;
  setRunning(true);
  await persist(c);
  const userItem = { type: 'message', role: 'user', content: text };
  const before = { head: c.previousResponseId, items: c.items.length, fileSent: c.fileSent };
  const tools: DemoToolState = { file: c.file };
  // The model sees the file apply_patch edits: sent (as a developer message) first and again after each change.
  const fileSent = c.file;
  const sendFile = settings.tools && c.fileSent !== c.file;
  let input: unknown[] = sendFile ? [demoFileItem(c.file), userItem] : [userItem];
  let responseId: string | null = null;
  const note = (t: string, error = false) => {
    const part: Part = { kind: 'note', text: t, error };
    assistant.parts!.push(part);
    view.querySelector('.parts')!.append(partView(part));
  };
  const rounds = new ToolRounds();
  try {
    for (;;) {
      responseId = null;
      const turn = await streamTurn(c, assistant, view, input, settings, rounds, controller.signal, (id) => (responseId = id));
      c.items.push(...input, ...turn.output);
      if (sendFile) c.fileSent = fileSent;
      c.previousResponseId = settings.store ? turn.responseId : null;
      if (turn.calls.length === 0) {
        if (turn.incompleteReason === 'max_output_tokens') {
          // A cut-off answer is often a loop ("first first first ..."); kept in the chain, a small model goes on
          // looping in every later turn. The next turn continues from before this one (the file is re-sent if a
          // tool changed it); the bubble keeps what was written.
          c.previousResponseId = before.head;
          c.items.length = before.items;
          c.fileSent = before.fileSent;
          note(`The answer was cut off at the output limit (${settings.maxOutputTokens} tokens), so the next message continues from before it. Raise Max output tokens in Settings and ask again.`);
        } else if (!turn.answered) note('The model ended without an answer. Try asking again in other words.');
        break;
      }
      if (rounds.answerOnly) {
        // max_tool_calls 0 holds the decoder to text; a server that ignored it would loop here.
        note('The model called a tool after it was asked to answer; the turn ends here.');
        break;
      }
      input = runToolCalls(c, assistant, turn.calls, declared, tools, rounds);
      rerender(view, assistant);
      await persist(c);
    }
    assistant.state = 'done';
  } catch (e) {
    if ((e as Error).name === 'AbortError' || controller.signal.aborted) {
      assistant.state = 'stopped';
      settling = settleStopped(c, settings.store ? responseId : null, input, before).catch(() => undefined);
    } else {
      assistant.state = 'error';
      note(failureNote(e instanceof TurnError ? e.failure : { message: (e as Error).message, code: null }), true);
    }
  } finally {
    if (run === current) run = null;
    setRunning(run !== null);
    rerender(view, assistant);
    announce(assistant);
    await settling;
    await persist(c);
  }
}

function rerender(view: HTMLElement, message: Message) {
  const fresh = messageView(message);
  view.replaceChildren(...fresh.childNodes);
  view.className = fresh.className;
  view.setAttribute('aria-busy', fresh.getAttribute('aria-busy') ?? 'false');
  scrollToEnd();
}

/** One polite announcement per finished message (never per token). */
function announce(message: Message) {
  const parts = message.parts ?? [];
  const answer = parts.filter((p) => p.kind === 'text').map((p) => p.text).join(' ').trim();
  const notes = parts.filter((p) => p.kind === 'note').map((p) => p.text).join(' ');
  const text = message.state === 'stopped' ? 'Stopped.' : `${stripMarkers(answer).slice(0, 400)} ${notes}`.trim();
  announcer.textContent = text ? `Assistant: ${text}` : 'Assistant finished.';
}

function setRunning(running: boolean) {
  sendButton.disabled = running || !ready;
  stopButton.disabled = !running;
  form.classList.toggle('running', running);
  sendButton.hidden = running;
  stopButton.hidden = !running;
}

function stopRun() {
  run?.controller.abort();
}

function startNewChat() {
  stopRun();
  conversation = newConversation(INITIAL_FILE);
  renderConversation();
  prompt.focus();
}

async function switchTo(c: Conversation) {
  if (c.id === conversation.id) return;
  stopRun();
  conversation = c;
  renderConversation();
  closeDrawers();
}

// ------------------------------------------------------------------ controls

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = prompt.value.trim();
  if (!text || run || !ready) return;
  if (!settingsForm.reportValidity()) {
    openDrawer('settings');
    return;
  }
  prompt.value = '';
  void converse(text);
});
prompt.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    form.requestSubmit();
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && run) {
    e.preventDefault();
    stopRun();
  } else if (e.key === 'Escape') closeDrawers();
});
stopButton.addEventListener('click', stopRun);
$<HTMLButtonElement>('new-chat').addEventListener('click', () => {
  startNewChat();
  closeDrawers();
});

function openDrawer(which: 'sidebar' | 'settings') {
  document.body.dataset.drawer = document.body.dataset.drawer === which ? '' : which;
  $('toggle-sidebar').setAttribute('aria-expanded', String(document.body.dataset.drawer === 'sidebar'));
  $('toggle-settings').setAttribute('aria-expanded', String(document.body.dataset.drawer === 'settings'));
}
function closeDrawers() {
  if (!document.body.dataset.drawer) return;
  document.body.dataset.drawer = '';
  $('toggle-sidebar').setAttribute('aria-expanded', 'false');
  $('toggle-settings').setAttribute('aria-expanded', 'false');
}
$('toggle-sidebar').addEventListener('click', () => openDrawer('sidebar'));
$('toggle-settings').addEventListener('click', () => openDrawer('settings'));
$('scrim').addEventListener('click', closeDrawers);
settingsForm.addEventListener('submit', (e) => e.preventDefault());

// ------------------------------------------------------------------ start

async function restore() {
  conversations = await listConversations().catch(() => []);
  for (const c of conversations) {
    // A page closed while generating: that turn is over.
    for (const m of c.messages) if (m.state === 'generating') m.state = 'stopped';
  }
  if (conversations[0]) conversation = conversations[0];
  renderConversation();
}

async function start() {
  fileView.previousElementSibling!.textContent = demoFileName;
  setRunning(false);
  await restore();
  if (!('gpu' in navigator)) {
    setStatus('This browser has no WebGPU (navigator.gpu is missing). Use Chromium 124+ or enable WebGPU.', true);
    return;
  }
  const onProgress = progressReporter();
  // Model loads happen at the first request too, after the shim is ready: listen for the whole visit.
  if (typeof BroadcastChannel === 'function') new BroadcastChannel(progressChannelName).onmessage = (e: MessageEvent<ShimProgress>) => onProgress(e.data);
  try {
    const shim = await installResponsesShim({
      onProgress: (p) => {
        onProgress(p);
        if (p.phase === 'registering') setStatus('Starting the in-browser runtime…');
        if (p.phase === 'activating') setStatus('Starting the service worker…');
      },
    });
    baseURL = shim.baseURL;
    // /v1/models lists each alias as a row of its own (alias_of); the picker shows each model once.
    const pick = (rows: { id: string; alias_of?: string }[]) => rows.filter((m) => !m.alias_of);
    const models = pick(shim.models);
    modelSelect.replaceChildren(...models.map((m) => new Option(m.id, m.id)));
    loadBox.hidden = true;
    mountModelPanel($<HTMLElement>('models'), baseURL, async () => {
      const response = await fetch(`${baseURL}/models`);
      if (!response.ok) return;
      const selected = modelSelect.value;
      const rows = pick(((await response.json()) as { data: { id: string; alias_of?: string }[] }).data);
      modelSelect.replaceChildren(...rows.map((m) => new Option(m.id, m.id, false, m.id === selected)));
    });
    ready = models.length > 0;
    setRunning(run !== null);
    setStatus(models.length ? `Ready · ${models.map((m) => m.id).join(', ')}` : 'No model is available: import or download one under Models.', !models.length);
  } catch (e) {
    setStatus((e as Error).message, true);
  }
}

// For scripts and tests: the state, and the markdown renderer the chat uses.
Object.assign(window, { demoState: () => ({ conversation, running: run !== null }), demoMarkdown: { toHtml: markdownToHtml, render: renderMarkdown } });
void start();
