#!/usr/bin/env bash
# One prepared GPU run (bench/README.md, "gpu/: one prepared run on a lent GPU machine"): unpacks .gpu-carry (made here by bench/gpu/prepare.sh),
# finds a Vulkan driver (NVIDIA's where there is one, installing the carried Vulkan loader if the machine has none;
# else Chromium's SwiftShader, for a test run on a CPU), runs the bundled bench under a total time cap and prints
# its JSON, then a one-line summary per model. Files: $OUT/gpu-bench.json (rewritten after each model, so a capped
# run keeps what finished), $OUT/gpu-bench.log, $OUT/nvidia-smi.txt, $OUT/gpu-memory.csv.
#   bash bench/gpu/run.sh [--tiny] [--models id,id] [--prefill N] [--decode N]   (BENCH_GPU_CAP_S=480 by default)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
C="$ROOT/.gpu-carry"
W="${TMPDIR:-/tmp}/webgpu-responses-gpu"
CAP="${BENCH_GPU_CAP_S:-480}"
START=$(date +%s)
OUTDIR="${OUT:-$W/out}"
mkdir -p "$W" "$OUTDIR"
log() { printf '[run.sh %ss] %s\n' $(($(date +%s) - START)) "$*" >&2; }
[ -f "$C/bench.mjs" ] || { echo "no $C/bench.mjs: run 'bash bench/gpu/prepare.sh' on the development machine and carry .gpu-carry" >&2; exit 2; }

unxz_to() { # file.xz -> stdout
  if command -v xz >/dev/null; then xz -dc "$1"; else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi
}
if command -v node >/dev/null && [ "$(node --version)" = "$(cat "$C/node-version.txt" 2>/dev/null)" ]; then
  NODE="$(command -v node)"
else
  NODE="$W/node"
  if [ ! -x "$NODE" ]; then unxz_to "$C/node.xz" > "$NODE.part" && chmod +x "$NODE.part" && mv "$NODE.part" "$NODE"; fi
fi
rm -rf "$W/node_modules"
mkdir -p "$W/node_modules"
unxz_to "$C/webgpu.tar.xz" | tar -x -C "$W/node_modules"
cp "$C/bench.mjs" "$W/bench.mjs"
log "node $("$NODE" --version) and the webgpu package unpacked in $W"

SMI_PID=
if command -v nvidia-smi >/dev/null || [ -d /usr/local/nvidia ]; then
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
    log "no Vulkan loader: installing the carried packages ($(ls "$C"/debs/*.deb 2>/dev/null | wc -l) .deb)"
    for f in "$C"/debs/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
    ldconfig
  fi
  for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.x86_64.json; do
    if [ -f "$j" ]; then export VK_DRIVER_FILES="$j" VK_ICD_FILENAMES="$j"; break; fi
  done
  e=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -f "$e" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$e"
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"; done
  log "NVIDIA: VK_DRIVER_FILES=${VK_DRIVER_FILES:-none found} loader: $(ldconfig -p | grep -m1 libvulkan.so.1 | sed 's/.*=> //')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi > "$OUTDIR/nvidia-smi.txt" 2>&1
    nvidia-smi --query-gpu=timestamp,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.mem --format=csv,nounits -lms 500 > "$OUTDIR/gpu-memory.csv" 2>/dev/null &
    SMI_PID=$!
  fi
elif [ -f /usr/lib/chromium/vk_swiftshader_icd.json ]; then
  export VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json LD_LIBRARY_PATH="/usr/lib/chromium${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "no NVIDIA driver: SwiftShader (a CPU adapter)"
else
  log "no NVIDIA driver and no SwiftShader: Dawn will look for any Vulkan driver"
fi

LEFT=$((CAP - ($(date +%s) - START)))
BUDGET=$((LEFT * 3 / 4))
log "bench: $LEFT s left of $CAP; new models start only within the first $BUDGET s"
timeout -k 10 "$LEFT" "$NODE" "$W/bench.mjs" --out "$OUTDIR/gpu-bench.json" --budget-s "$BUDGET" "$@" > "$W/stdout.json" 2> >(tee "$OUTDIR/gpu-bench.log" >&2)
RC=$?
[ -n "$SMI_PID" ] && kill "$SMI_PID" 2>/dev/null
[ $RC -eq 124 ] && log "stopped at the time cap: $OUTDIR/gpu-bench.json holds the models that finished"
[ -f "$OUTDIR/gpu-bench.json" ] && cat "$OUTDIR/gpu-bench.json"
"$NODE" -e '
const fs = require("fs");
const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
let peak = null;
try {
  const rows = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").slice(1).map((l) => l.split(",").map((x) => x.trim()));
  peak = Math.max(...rows.map((x) => Number(x[1])).filter(Number.isFinite));
} catch {}
const a = r.adapter || {};
console.log(`SUMMARY adapter=${JSON.stringify([a.vendor, a.architecture, a.description].filter(Boolean).join(" "))} elapsed_s=${r.elapsed_s} peak_gpu_memory_mib=${peak}`);
for (const m of r.models || []) console.log(`SUMMARY ${m.id}: ${m.error ? "ERROR " + m.error.split("\n")[0] : `prefill ${m.prefill_tok_s} tok/s (${m.prompt_tokens} tokens)${m.long_prefill ? `, long prefill ${JSON.stringify(m.long_prefill)}` : ""}, decode ${m.decode_tok_s} tok/s (${m.generated_tokens}), ${m.decode_weight_gb_s} GB/s of weights = ${m.bandwidth_fraction} of bandwidth (${m.measured_read_fraction} of the measured read), weights ${(m.weight_gpu_bytes / 2 ** 20).toFixed(0)} MiB, sampling greedy ${m.sampling_greedy_ms} ms top-p ${m.sampling_top_p_ms} ms`}`);
for (const m of r.models || []) for (const v of m.variants || []) console.log(`SUMMARY ${m.id} / ${v.name}: ${v.error ? "ERROR " + v.error.split("\n")[0] : `prefill ${v.prefill_tok_s} tok/s, decode ${v.decode_tok_s} tok/s, decode GPU ${v.decode_gpu_ms} ms`}`);
for (const m of r.models || []) console.log(`SUMMARY ${m.id} decode ops: ${JSON.stringify(m.decode_top_ops)} of ${m.decode_gpu_ms} ms`);
if (r.floor) console.log(r.floor.error ? `SUMMARY floor ERROR ${r.floor.error.split("\n")[0]}` : `SUMMARY floor: read ${r.floor.read_gb_s} GB/s (${r.floor.read.map((x) => `${x.pattern} ${x.chunk_words}: ${x.gb_s}`).join(", ")}); dispatch chains ${r.floor.dispatch_chain.map((x) => `${x.dispatches} x ${x.workgroups} wg: ${x.gpu_ms} ms (${x.us_per_dispatch} us each)`).join(", ")}`);
for (const s of (r.sampling && r.sampling.rows) || []) console.log(`SUMMARY sampling ${s.vocab} ${s.name}: ${s.median_ms} ms`);
if (r.sampling && r.sampling.error) console.log(`SUMMARY sampling ERROR ${r.sampling.error.split("\n")[0]}`);
for (const s of r.skipped || []) console.log(`SUMMARY skipped ${s}`);
' "$OUTDIR/gpu-bench.json" "$OUTDIR/gpu-memory.csv" 2>&1 || true
exit $RC
