// Reading the JSON lines `serve --log-requests FILE` writes: every request a client sent, its body parsed.
import { existsSync, readFileSync } from 'node:fs';

export interface LoggedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
}

export function readRequestLog(file: string): LoggedRequest[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const entry = JSON.parse(line) as { method: string; path: string; headers: Record<string, string>; body: string };
      let body: Record<string, unknown> | null = null;
      try {
        body = entry.body === '' ? null : (JSON.parse(entry.body) as Record<string, unknown>);
      } catch {
        body = null;
      }
      return { method: entry.method, path: entry.path, headers: entry.headers, body };
    });
}

/** The top-level body fields and input item types seen, for the field survey the report lists. */
export function fieldSurvey(log: LoggedRequest[]): { fields: string[]; inputTypes: string[] } {
  const fields = new Set<string>();
  const inputTypes = new Set<string>();
  for (const r of log) {
    for (const key of Object.keys(r.body ?? {})) fields.add(key);
    const input = r.body?.input;
    if (Array.isArray(input)) for (const item of input) inputTypes.add(String((item as { type?: unknown }).type ?? `message(${String((item as { role?: unknown }).role)})`));
  }
  return { fields: [...fields].sort(), inputTypes: [...inputTypes].sort() };
}
