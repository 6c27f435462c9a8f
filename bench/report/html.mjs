// Writes the bench JSON as a self-contained HTML page (inline SVG bar charts, no scripts): decode tok/s of the
// engine beside wllama per model, the roofline fraction, prefill tok/s, time to first token through
// /v1/responses, and the per-kernel share of decode GPU time.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Horizontal bars: rows of { label, bars: [{ value, color, text }] }. */
function barChart(title, rows, unit) {
  const max = Math.max(1e-9, ...rows.flatMap((r) => r.bars.map((b) => b.value ?? 0)));
  const barH = 16;
  const labelW = 210;
  const width = 760;
  const plotW = width - labelW - 120;
  let y = 28;
  let body = '';
  for (const r of rows) {
    body += `<text x="4" y="${y + barH * 0.8}" font-size="12">${esc(r.label)}</text>`;
    for (const b of r.bars) {
      const w = b.value ? Math.max(1, (b.value / max) * plotW) : 0;
      body += `<rect x="${labelW}" y="${y}" width="${w}" height="${barH - 2}" fill="${b.color}"/>`;
      body += `<text x="${labelW + w + 4}" y="${y + barH * 0.75}" font-size="11">${esc(b.text ?? (b.value == null ? 'n/a' : `${b.value} ${unit}`))}</text>`;
      y += barH;
    }
    y += 6;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 8}"><text x="4" y="16" font-size="14" font-weight="bold">${esc(title)}</text>${body}</svg>`;
}

export function writeHtmlReport(report, path) {
  const models = report.models ?? [];
  const ENGINE = '#2b6cb0';
  const WLLAMA = '#c05621';
  const parts = [];
  parts.push(
    barChart(
      'Decode tokens/s (blue: this engine on WebGPU, orange: wllama = llama.cpp wasm, same GGUF, same browser)',
      models.map((m) => ({
        label: m.id ?? m.name,
        bars: [
          { value: m.decode_tok_s ?? null, color: ENGINE, text: m.decode_tok_s != null ? `${m.decode_tok_s} tok/s (${Math.round((m.roofline_fraction ?? 0) * 100)}% of roofline)` : m.error ?? 'n/a' },
          { value: m.wllama_decode_tok_s ?? null, color: WLLAMA, text: m.wllama_decode_tok_s != null ? `${m.wllama_decode_tok_s} tok/s` : 'n/a' },
        ],
      })),
      'tok/s',
    ),
  );
  for (const target of [128, 512]) {
    parts.push(
      barChart(
        `Prefill tokens/s at ~${target} prompt tokens`,
        models.map((m) => ({
          label: m.id ?? m.name,
          bars: [
            { value: m.prefill?.find((p) => p.target === target)?.prefill_tok_s ?? null, color: ENGINE, text: undefined },
            { value: m.wllama?.prefill?.find((p) => p.target === target)?.prefill_tok_s ?? null, color: WLLAMA, text: undefined },
          ],
        })),
        'tok/s',
      ),
    );
  }
  parts.push(
    barChart(
      'Time to first token through /v1/responses, ms (dark: first generated token, light: first output_text.delta)',
      models.flatMap((m) =>
        (m.responses_ttft ?? []).map((t) => ({
          label: `${m.id} ${t.tools_on_offer ? '(tools: held)' : '(live)'}`,
          bars: [
            { value: t.first_generated_token_ms, color: ENGINE },
            { value: t.first_output_text_delta_ms, color: '#90cdf4', text: t.first_output_text_delta_ms == null ? 'no output_text.delta' : undefined },
          ],
        })),
      ),
      'ms',
    ),
  );
  const profiled = models.find((m) => m.id === report.headline_model && m.decode_profile) ?? models.find((m) => m.decode_profile);
  if (profiled) {
    parts.push(
      barChart(
        `Decode GPU time per kernel, ms/token (${profiled.id}; one timed pass per dispatch)`,
        profiled.decode_profile.kernels.slice(0, 14).map((k) => ({
          label: k.kernel,
          bars: [{ value: k.ms_per_token, color: '#4a5568', text: `${k.ms_per_token} ms (${Math.round(k.share * 100)}%, ${k.dispatches_per_token}/token)` }],
        })),
        'ms',
      ),
    );
  }
  const withOps = models.find((m) => m.id === report.headline_model && m.decode_ops) ?? models.find((m) => m.decode_ops);
  if (withOps) {
    parts.push(
      barChart(
        `Decode GPU time per op, ms/token (${withOps.id}; engine.profile)`,
        withOps.decode_ops.ops.map((o) => ({ label: o.op, bars: [{ value: o.ms_per_token, color: '#2f855a', text: `${o.ms_per_token} ms (${Math.round(o.share * 100)}%)` }] })),
        'ms',
      ),
    );
  }
  const t = report.targets;
  const targetsTable = t
    ? `<h2>Issue 19's targets (all met: ${esc(t.all_met)})</h2><table border="1" cellpadding="4" style="border-collapse:collapse;font-size:13px"><tr><th>target</th><th>measured</th><th>goal</th><th>met</th></tr>${[
        ...t.decode_vs_wllama.rows.map((r) => [`decode vs wllama: ${r.model}`, `${r.value ?? 'n/a'}x (${r.engine_decode_tok_s} / ${r.wllama_decode_tok_s} tok/s${r.paired ? `, paired ${r.rounds}` : ', unpaired'})`, '>= 1.0x', r.met]),
        ['sampling at 152k, slowest case / 0.5B decode step', String(t.sampling_152k.value ?? 'n/a'), '< 0.05', t.sampling_152k.met],
        [`prefill of ${t.prefill_8k_bundled.tokens ?? '?'} tokens, bundled model`, `${t.prefill_8k_bundled.value ?? 'n/a'} s`, '< 60 s', t.prefill_8k_bundled.met],
      ].map((cells) => `<tr>${cells.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</table>`
    : '';
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>webgpu-responses bench ${esc(report.date ?? '')}</title>
<style>body{font-family:sans-serif;margin:16px}pre{background:#f4f4f4;padding:8px;font-size:11px;overflow:auto}</style></head><body>
<h1>webgpu-responses benchmark</h1>
<p>${esc(report.date ?? '')} — ${esc(report.adapter ? `${report.adapter.vendor} ${report.adapter.architecture} ${report.adapter.description} (fallback: ${report.adapter.isFallbackAdapter})` : 'no adapter')}
— roofline ${esc(report.roofline?.gb_per_s ?? 'n/a')} GB/s — load average ${esc((report.load_average_start ?? []).join(' '))} → ${esc((report.load_average_end ?? []).join(' '))}</p>
<p>Headline (${esc(report.headline_model ?? 'n/a')}): decode ${esc(report.decode_tok_s ?? 'n/a')} tok/s, ${esc(report.roofline_fraction ?? 'n/a')} of the roofline; wllama ${esc(report.wllama_decode_tok_s ?? 'n/a')} tok/s.</p>
${targetsTable}
${parts.join('\n<br>\n')}
<h2>JSON</h2><pre>${esc(JSON.stringify(report, null, 2))}</pre></body></html>\n`;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html);
}

// `node bench/report/html.mjs runs/<run>.json [out.html]`: the chart of a kept run (runs/ keeps only the JSON).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { readFileSync } = await import('node:fs');
  const [input, output = input.replace(/\.json$/, '.html')] = process.argv.slice(2);
  if (!input) {
    console.error('usage: node bench/report/html.mjs <run.json> [out.html]');
    process.exit(2);
  }
  writeHtmlReport(JSON.parse(readFileSync(input, 'utf8')), output);
  console.log(output);
}
