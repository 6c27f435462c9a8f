// The demo's model panel: every model the service worker knows (bundled, downloadable by URL, imported) with its
// size, license and status, download buttons with live progress bars (resumable: the worker keeps stored parts),
// delete, import of a local GGUF file (picker or drag and drop), and the origin's storage use.
// It speaks only to the worker's /v1/models routes (src/sw/model-manager.ts).
import type { ManagedModel } from '../sw/model-manager';
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

export function mountModelPanel(root: HTMLElement, baseURL: string, onModelsChanged: () => void) {
  const list = document.createElement('ul');
  list.className = 'models';
  const storage = document.createElement('p');
  storage.className = 'storage';
  const message = document.createElement('p');
  message.setAttribute('role', 'status');
  const importLabel = document.createElement('label');
  importLabel.textContent = 'Import a GGUF file ';
  const picker = document.createElement('input');
  picker.type = 'file';
  picker.accept = '.gguf';
  importLabel.append(picker);
  root.append(list, importLabel, storage, message);

  const say = (text: string, isError = false) => {
    message.textContent = text;
    message.classList.toggle('error', isError);
  };

  async function refresh() {
    const response = await fetch(`${baseURL}/models/catalog`);
    if (!response.ok) return say(await errorText(response), true);
    const catalog = (await response.json()) as CatalogResponse;
    list.replaceChildren(...catalog.data.map(row));
    const { usage, quota, persisted } = catalog.storage;
    storage.textContent = `Storage: ${megabytes(usage)} of ${megabytes(quota)} used${persisted ? ' (persistent)' : ''}`;
  }

  function row(model: ManagedModel): HTMLLIElement {
    const li = document.createElement('li');
    const title = document.createElement('span');
    title.textContent = `${model.id} · ${megabytes(model.bytes)} · ${model.license} · ${model.status}`;
    title.title = model.description;
    li.append(title);
    if (model.status === 'available' || model.status === 'downloading' || model.stored_bytes) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = model.stored_bytes ? 'Resume download' : model.status === 'downloading' ? 'Show progress' : 'Download';
      button.setAttribute('aria-label', `${button.textContent} ${model.id}`);
      button.onclick = () => void download(model, li);
      li.append(button);
    }
    if (model.source !== 'bundled' && model.status !== 'available') {
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = 'Delete';
      remove.setAttribute('aria-label', `Delete ${model.id}`);
      remove.onclick = async () => {
        if (!confirm(`Delete ${model.id} (${megabytes(model.stored_bytes ?? model.bytes)}) from this browser?`)) return;
        const response = await fetch(`${baseURL}/models/${encodeURIComponent(model.id)}`, { method: 'DELETE' });
        if (!response.ok) say(await errorText(response), true);
        await refresh();
        onModelsChanged();
      };
      li.append(remove);
    }
    return li;
  }

  async function download(model: ManagedModel, li: HTMLLIElement) {
    const bar = document.createElement('progress');
    bar.max = 1;
    bar.setAttribute('aria-label', `Download progress of ${model.id}`);
    li.append(bar);
    const response = await fetch(`${baseURL}/models/${encodeURIComponent(model.id)}/download`, { method: 'POST' });
    if (!response.ok || !response.body) {
      bar.remove();
      return say(await errorText(response), true);
    }
    for await (const { data } of readServerSentEvents(response.body)) {
      const event = JSON.parse(data) as { type: string; loaded?: number; total?: number; error?: { message: string } };
      if (event.type === 'model.download.progress' && event.total) bar.value = (event.loaded ?? 0) / event.total;
      if (event.type === 'model.download.failed') say(`Download of ${model.id} failed: ${event.error?.message}`, true);
      if (event.type === 'model.download.completed') say(`${model.id} downloaded.`);
    }
    await refresh();
    onModelsChanged();
  }

  async function importFile(file: File) {
    say(`Importing ${file.name}…`);
    const response = await fetch(`${baseURL}/models/import?name=${encodeURIComponent(file.name)}`, { method: 'POST', body: file });
    if (!response.ok) return say(`Import failed: ${await errorText(response)}`, true);
    say(`${file.name} imported.`);
    await refresh();
    onModelsChanged();
  }

  picker.onchange = () => picker.files?.[0] && void importFile(picker.files[0]);
  root.addEventListener('dragover', (e) => e.preventDefault());
  root.addEventListener('drop', (e) => {
    e.preventDefault();
    const file = e.dataTransfer?.files[0];
    if (file) void importFile(file);
  });
  void refresh();
  return { refresh };
}
