#!/usr/bin/env bash
# Prepares what bench/gpu/run.sh needs on a machine with no Node, no npm and no network, in .gpu-carry/ (ignored
# through .git/info/exclude; name it in the device tool's `carry`): the bench bundled into one .mjs (bundle.mjs),
# this machine's node binary (xz), the `webgpu` package's index.js, package.json and linux-x64 dawn.node (xz), and
# the Vulkan loader and GL dispatch packages the device README names (apt-get download; skipped without apt).
# Checks that the working tree plus .gpu-carry stay under the 64 MiB a device call carries.
#   bash bench/gpu/prepare.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
C="$ROOT/.gpu-carry"
cd "$ROOT"
grep -qx '/.gpu-carry/' .git/info/exclude 2>/dev/null || echo '/.gpu-carry/' >> .git/info/exclude
rm -rf "$C"
mkdir -p "$C/debs"
node bench/gpu/bundle.mjs "$C/bench.mjs" >/dev/null
NODE="$(node -p process.execPath)"
xz -T2 -6 -c "$NODE" > "$C/node.xz"
node --version > "$C/node-version.txt"
test -f node_modules/webgpu/dist/linux-x64/dawn.node || { echo "node_modules/webgpu is missing: npm ci first" >&2; exit 1; }
tar -C node_modules -cJf "$C/webgpu.tar.xz" webgpu/index.js webgpu/package.json webgpu/dist/linux-x64/dawn.node
if command -v apt-get >/dev/null; then
  L=/tmp/webgpu-responses-apt-amd64
  mkdir -p "$L/partial"
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists="$L")
  if apt-get "${o[@]}" update >/dev/null 2>&1; then
    (cd "$C/debs" && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1) \
      || echo "warning: apt-get download failed: run.sh will rely on the device's own Vulkan loader" >&2
  else
    echo "warning: apt-get update failed: run.sh will rely on the device's own Vulkan loader" >&2
  fi
fi
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null | tail -1 | cut -f1)
carry=$(du -sb "$C" | cut -f1)
total=$((tree + carry))
printf 'prepared %s: %s MiB (working tree %s MiB + .gpu-carry %s MiB of 64)\n' "$C" $((total >> 20)) $((tree >> 20)) $((carry >> 20))
ls -la "$C" "$C/debs"
if [ "$total" -ge $((62 << 20)) ]; then echo "too large for one device call (64 MiB)" >&2; exit 1; fi
