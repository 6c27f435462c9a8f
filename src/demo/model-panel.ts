// The demo's model panel: every model the service worker knows (bundled, downloadable by URL, imported) with its
// size, license and status, download buttons with live progress bars (resumable: the worker keeps stored parts),
// delete, import of a local GGUF file (picker or drag and drop), and the origin's storage use.
// It speaks only to the worker's /v1/models routes (src/model-store/model-manager.ts).
import type { ManagedModel } from '../model-store/model-manager';
import { readServerSentEvents } from './sse';

interface CatalogResponse {
  data: ManagedModel[];
  storage: { usage: number; quota: number; persisted: boolean };
}

const megabytes = (n: number) => `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;

async function errorText(response: Response): Promise<string> {
  const body = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  return body?.error?.message ?? `HTTP ${response.status}`;
}

/** What the panel's steps share: its elements, where the worker is, and whom to tell when the list of models changes. */
interface Panel {
  list: HTMLUListElement;
  storage: HTMLParagraphElement;
  message: HTMLParagraphElement;
  baseURL: string;
  onModelsChanged: () => void;
}

export function mountModelPanel(root: HTMLElement, baseURL: string, onModelsChanged: () => void) {
  const list = document.createElement('ul');
  list.className = 'models';
  const storage = document.createElement('p');
  storage.className = 'storage';
  const message = document.createElement('p');
  message.setAttribute('role', 'status');
  const panel: Panel = { list, storage, message, baseURL, onModelsChanged };
  const importLabel = importControl(panel);
  const byUrl = byUrlForm(panel);
  root.append(list, importLabel, byUrl, storage, message);
  root.addEventListener('dragover', (e) => e.preventDefault());
  root.addEventListener('drop', (e) => {
    e.preventDefault();
    const file = e.dataTransfer?.files[0];
    if (file) void importFile(panel, file);
  });
  const refresh = () => refreshPanel(panel);
  void refresh();
  return { refresh };
}

/** The file picker that imports a local GGUF file. */
function importControl(panel: Panel): HTMLLabelElement {
  const importLabel = document.createElement('label');
  importLabel.textContent = 'Import a GGUF file ';
  const picker = document.createElement('input');
  picker.type = 'file';
  picker.accept = '.gguf';
  importLabel.append(picker);
  picker.onchange = () => picker.files?.[0] && void importFile(panel, picker.files[0]);
  return importLabel;
}

/** Download by URL: a GGUF file anywhere the browser may fetch it from (kept and resumable like the catalog's). */
function byUrlForm(panel: Panel): HTMLFormElement {
  const byUrl = document.createElement('form');
  byUrl.className = 'by-url';
  byUrl.setAttribute('aria-label', 'Download a model by URL');
  const urlInput = Object.assign(document.createElement('input'), { type: 'url', required: true, placeholder: 'https://…/model.gguf', name: 'url' });
  urlInput.setAttribute('aria-label', 'Model URL (a GGUF file)');
  const idInput = Object.assign(document.createElement('input'), { type: 'text', required: true, placeholder: 'name', name: 'id', pattern: '[A-Za-z0-9._-]{1,64}' });
  idInput.setAttribute('aria-label', 'Name for the model');
  const urlButton = Object.assign(document.createElement('button'), { type: 'submit', textContent: 'Download by URL' });
  byUrl.append(urlInput, idInput, urlButton);
  byUrl.onsubmit = (e) => {
    e.preventDefault();
    if (!byUrl.reportValidity()) return;
    const li = document.createElement('li');
    li.textContent = idInput.value;
    panel.list.append(li);
    void download(panel, { id: idInput.value } as ManagedModel, li, { url: urlInput.value });
  };
  return byUrl;
}

function say(panel: Panel, text: string, isError = false) {
  panel.message.textContent = text;
  panel.message.classList.toggle('error', isError);
}

async function refreshPanel(panel: Panel) {
  const response = await fetch(`${panel.baseURL}/models/catalog`);
  if (!response.ok) return say(panel, await errorText(response), true);
  const catalog = (await response.json()) as CatalogResponse;
  panel.list.replaceChildren(...catalog.data.map((model) => row(panel, model)));
  const { usage, quota, persisted } = catalog.storage;
  panel.storage.textContent = `Storage: ${megabytes(usage)} of ${megabytes(quota)} used${persisted ? ' (persistent)' : ''}`;
}

function row(panel: Panel, model: ManagedModel): HTMLLIElement {
  const li = document.createElement('li');
  const title = document.createElement('span');
  const gpu = model.min_gpu_memory_bytes ? ` · needs a GPU with ≥ ${Math.round(model.min_gpu_memory_bytes / 2 ** 30)} GB` : '';
  title.textContent = `${model.id} · ${megabytes(model.bytes)} · ${model.license}${gpu} · ${model.status}`;
  title.title = [model.description, model.verified ? `verified: ${model.verified.architecture}, ${model.verified.tensor_types.join(' ')}, ${model.verified.chat_format} format` : model.architecture ? `${model.architecture}, ${model.expected_format ?? '?'} format (verified on download)` : ''].filter(Boolean).join(' · ');
  li.append(title);
  if (model.status === 'available' || model.status === 'downloading' || model.stored_bytes) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = model.stored_bytes ? 'Resume download' : model.status === 'downloading' ? 'Show progress' : 'Download';
    button.setAttribute('aria-label', `${button.textContent} ${model.id}`);
    button.onclick = () => void download(panel, model, li);
    li.append(button);
  }
  // Anything added by hand (an import, a download by URL, failed or not) can go; a catalog model once something of it is stored.
  if (model.source === 'imported' || (model.source === 'catalog' && (model.status !== 'available' || model.stored_bytes))) {
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = 'Delete';
    remove.setAttribute('aria-label', `Delete ${model.id}`);
    remove.onclick = async () => {
      if (!confirm(`Delete ${model.id} (${megabytes(model.stored_bytes ?? model.bytes)}) from this browser?`)) return;
      const response = await fetch(`${panel.baseURL}/models/${encodeURIComponent(model.id)}`, { method: 'DELETE' });
      if (!response.ok) say(panel, await errorText(response), true);
      await refreshPanel(panel);
      panel.onModelsChanged();
    };
    li.append(remove);
  }
  return li;
}

async function download(panel: Panel, model: ManagedModel, li: HTMLLIElement, body?: { url: string }) {
  const bar = document.createElement('progress');
  bar.max = 1;
  bar.setAttribute('aria-label', `Download progress of ${model.id}`);
  const detail = document.createElement('span');
  detail.className = 'download-detail';
  li.append(bar, detail);
  // Only a page can ask for persistent storage (the worker's quota check says when it was not granted).
  await navigator.storage?.persist?.().catch(() => false);
  const response = await fetch(`${panel.baseURL}/models/${encodeURIComponent(model.id)}/download`, {
    method: 'POST',
    ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  if (!response.ok || !response.body) {
    bar.remove();
    detail.remove();
    say(panel, await errorText(response), true);
    return refreshPanel(panel);
  }
  let start: { at: number; loaded: number } | null = null;
  for await (const { data } of readServerSentEvents(response.body)) {
    const event = JSON.parse(data) as { type: string; loaded?: number; total?: number; error?: { message: string } };
    if (event.type === 'model.download.progress' && event.total) {
      const loaded = event.loaded ?? 0;
      start ??= { at: performance.now(), loaded };
      const seconds = (performance.now() - start.at) / 1000;
      const rate = seconds > 0.5 ? (loaded - start.loaded) / seconds : 0;
      bar.value = loaded / event.total;
      detail.textContent = `${megabytes(loaded)} of ${megabytes(event.total)} (${Math.floor((loaded / event.total) * 100)}%)${rate > 0 ? ` · about ${Math.ceil((event.total - loaded) / rate)} s left` : ''}`;
    }
    if (event.type === 'model.download.failed') say(panel, `Download of ${model.id} failed: ${event.error?.message}`, true);
    if (event.type === 'model.download.completed') say(panel, `${model.id} downloaded.`);
  }
  await refreshPanel(panel);
  panel.onModelsChanged();
}

async function importFile(panel: Panel, file: File) {
  say(panel, `Importing ${file.name}…`);
  const response = await fetch(`${panel.baseURL}/models/import?name=${encodeURIComponent(file.name)}`, { method: 'POST', body: file });
  if (!response.ok) return say(panel, `Import failed: ${await errorText(response)}`, true);
  say(panel, `${file.name} imported.`);
  await refreshPanel(panel);
  panel.onModelsChanged();
}
