// The demo page: a chat over the service worker's /v1/responses with streaming text, collapsible reasoning, tool
// calls run by the page (calculator, clock, apply_patch on an in-page file), phase labels, a stop button, settings,
// and live time-to-first-token and tokens/s. It talks to the runtime only over HTTP, like any other client.
import { installResponsesShim } from '../embed/install-responses-shim';
import { demoFileName, demoTools, runDemoTool, type DemoToolState } from './demo-tools';
import { mountModelPanel } from './model-panel';
import { readServerSentEvents } from './sse';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const statusLine = $<HTMLParagraphElement>('status');
const progressBar = $<HTMLProgressElement>('load-progress');
const chat = $<HTMLElement>('chat');
const form = $<HTMLFormElement>('composer');
const prompt = $<HTMLTextAreaElement>('prompt');
const sendButton = $<HTMLButtonElement>('send');
const stopButton = $<HTMLButtonElement>('stop');
const stats = $<HTMLParagraphElement>('stats');
const modelSelect = $<HTMLSelectElement>('model');
const fileView = $<HTMLPreElement>('file');

const toolState: DemoToolState = { file: 'Shopping list\n- bread\n- milk\n' };
let baseURL = '';
let previousResponseId: string | null = null;
let controller: AbortController | null = null;

function setStatus(text: string, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

function renderFile() {
  fileView.textContent = toolState.file;
}

function bubble(kind: 'user' | 'assistant', text = ''): HTMLDivElement {
  const div = document.createElement('div');
  div.className = `turn ${kind}`;
  div.textContent = text;
  chat.append(div);
  chat.scrollTop = chat.scrollHeight;
  return div;
}

/** A readable line for an OpenAI-shaped error body or anything else that came back. */
async function describeError(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: string; param?: string | null } };
    if (body.error?.message) return `${body.error.message}${body.error.param ? ` (${body.error.param})` : ''}`;
  } catch {
    /* not JSON */
  }
  return `HTTP ${response.status}: ${text.slice(0, 200)}`;
}

interface TurnResult {
  responseId: string | null;
  calls: { type: 'function_call' | 'custom_tool_call'; call_id: string; name: string; input: string }[];
}

/** One request/stream: renders events into an assistant bubble as they come. */
async function streamTurn(input: unknown[], signal: AbortSignal): Promise<TurnResult> {
  const settings = {
    temperature: Number($<HTMLInputElement>('temperature').value),
    max_output_tokens: Number($<HTMLInputElement>('max-tokens').value),
    store: $<HTMLInputElement>('store').checked,
    reasoning: $<HTMLInputElement>('reasoning').checked,
    tools: $<HTMLInputElement>('tools').checked,
  };
  const body = {
    model: modelSelect.value || undefined,
    input,
    stream: true,
    store: settings.store,
    temperature: settings.temperature,
    max_output_tokens: settings.max_output_tokens,
    reasoning: settings.reasoning ? { effort: 'medium' } : { effort: 'none' },
    tools: settings.tools ? demoTools : [],
    previous_response_id: settings.store ? previousResponseId ?? undefined : undefined,
  };
  const started = performance.now();
  const response = await fetch(`${baseURL}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw new Error(await describeError(response));

  const view = bubble('assistant');
  const parts = new Map<string, HTMLElement>();
  const result: TurnResult = { responseId: null, calls: [] };
  let firstText = 0;
  let outputTokens = 0;
  for await (const { data } of readServerSentEvents(response.body, signal)) {
    const event = JSON.parse(data) as Record<string, any>;
    switch (event.type) {
      case 'response.created':
        result.responseId = event.response.id;
        break;
      case 'response.output_item.added': {
        const item = event.item;
        let el: HTMLElement;
        if (item.type === 'reasoning') {
          const details = document.createElement('details');
          details.className = 'reasoning';
          details.innerHTML = '<summary>Reasoning</summary><span></span>';
          el = details;
        } else if (item.type === 'message') {
          el = document.createElement('div');
          el.innerHTML = `<span class="phase">${item.phase ?? ''}</span><span></span>`;
        } else {
          el = document.createElement('div');
          el.className = 'tool';
          el.innerHTML = `<b></b>(<span></span>)`;
          el.querySelector('b')!.textContent = item.name;
        }
        parts.set(item.id, el);
        view.append(el);
        break;
      }
      case 'response.output_text.delta':
      case 'response.reasoning_text.delta':
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        if (!firstText) firstText = performance.now();
        const span = parts.get(event.item_id)?.querySelector('span:last-child');
        if (span) span.textContent += event.delta;
        chat.scrollTop = chat.scrollHeight;
        break;
      }
      case 'response.output_item.done': {
        const item = event.item;
        if (item.type === 'function_call') result.calls.push({ type: item.type, call_id: item.call_id, name: item.name, input: item.arguments });
        if (item.type === 'custom_tool_call') result.calls.push({ type: item.type, call_id: item.call_id, name: item.name, input: item.input });
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed': {
        outputTokens = event.response.usage?.output_tokens ?? 0;
        if (event.type === 'response.incomplete') view.append(note(`(stopped: ${event.response.incomplete_details?.reason ?? 'incomplete'})`));
        if (event.type === 'response.failed') view.append(note(`Failed: ${event.response.error?.message ?? 'engine error'}`, true));
        break;
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const ttft = firstText ? ((firstText - started) / 1000).toFixed(2) : '–';
  stats.textContent = `time to first token ${ttft} s · ${outputTokens} tokens in ${seconds.toFixed(2)} s · ${(outputTokens / seconds).toFixed(1)} tokens/s`;
  return result;
}

function note(text: string, isError = false): HTMLElement {
  const p = document.createElement('p');
  p.textContent = text;
  if (isError) p.className = 'error';
  return p;
}

/** Sends the user's message and keeps going while the model calls tools (at most 4 rounds). */
async function converse(text: string) {
  bubble('user', text);
  controller = new AbortController();
  sendButton.disabled = true;
  stopButton.disabled = false;
  let input: unknown[] = [{ type: 'message', role: 'user', content: text }];
  try {
    for (let round = 0; round < 4; round++) {
      const turn = await streamTurn(input, controller.signal);
      previousResponseId = turn.responseId;
      if (turn.calls.length === 0) break;
      input = turn.calls.map((call) => {
        const output = runDemoTool(call.name, call.input, toolState);
        renderFile();
        bubble('assistant').append(note(`${call.name} → ${output}`));
        return { type: call.type === 'function_call' ? 'function_call_output' : 'custom_tool_call_output', call_id: call.call_id, output };
      });
      if (!$<HTMLInputElement>('store').checked) break; // without stored history the tool loop would lose context
    }
  } catch (e) {
    if ((e as Error).name !== 'AbortError') bubble('assistant').append(note((e as Error).message, true));
    else bubble('assistant').append(note('(stopped)'));
  } finally {
    controller = null;
    sendButton.disabled = false;
    stopButton.disabled = true;
  }
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = prompt.value.trim();
  if (!text || controller) return;
  prompt.value = '';
  void converse(text);
});
prompt.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) form.requestSubmit();
});
stopButton.addEventListener('click', () => controller?.abort());
$<HTMLButtonElement>('new-chat').addEventListener('click', () => {
  previousResponseId = null;
  chat.replaceChildren();
});

async function start() {
  renderFile();
  $<HTMLElement>('file').previousElementSibling!.textContent = demoFileName;
  if (!('gpu' in navigator)) {
    setStatus('This browser has no WebGPU (navigator.gpu is missing). Use Chromium 124+ or enable WebGPU.', true);
    sendButton.disabled = true;
    return;
  }
  try {
    const shim = await installResponsesShim({
      onProgress: (p) => {
        if (p.phase === 'loading-model' && p.total) {
          progressBar.hidden = false;
          progressBar.value = (p.loaded ?? 0) / p.total;
          setStatus(`Loading ${p.file ?? 'model'}…`);
        } else setStatus(p.phase === 'ready' ? 'Ready' : `${p.phase}…`);
      },
    });
    baseURL = shim.baseURL;
    // /v1/models lists each alias as a row of its own (alias_of); the picker shows each model once.
    const pick = (rows: { id: string; alias_of?: string }[]) => rows.filter((m) => !m.alias_of);
    const models = pick(shim.models);
    modelSelect.replaceChildren(...models.map((m) => new Option(m.id, m.id)));
    progressBar.hidden = true;
    mountModelPanel($<HTMLElement>('models'), baseURL, async () => {
      const response = await fetch(`${baseURL}/models`);
      if (!response.ok) return;
      const selected = modelSelect.value;
      const rows = pick(((await response.json()) as { data: { id: string; alias_of?: string }[] }).data);
      modelSelect.replaceChildren(...rows.map((m) => new Option(m.id, m.id, false, m.id === selected)));
    });
    setStatus(models.length ? `Ready · ${models.map((m) => m.id).join(', ')}` : 'No model is available: import or download one.', !models.length);
  } catch (e) {
    setStatus((e as Error).message, true);
    sendButton.disabled = true;
  }
}

void start();
