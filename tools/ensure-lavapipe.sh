#!/usr/bin/env bash
# Makes sure Mesa's lavapipe with shader-f16 is there for the native f16 test on Dawn
# (test/unit/gpu/native-f16.dawn.test.ts); `npm test` (test/run-all.mjs) runs it before the tests, as it does for
# Chromium. Mesa 25 (Debian bookworm-backports' mesa-vulkan-drivers 25.0.7-2~bpo12+1) has it; bookworm's own 22.3.6
# gives Dawn no adapter at all. Nothing to do when a Mesa >= 25 lavapipe is installed (one dpkg-query). Else, as root
# on Debian: the release's own package when it is new enough, otherwise its -backports suite, through a sources entry
# on the archive host the machine's apt sources already name (no host is written here). Exits 1 with the reason when it
# cannot; the test then fails saying what is missing.
set -uo pipefail
ensure_lavapipe() {
  local version icd=/usr/share/vulkan/icd.d
  version=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  if [ -n "$version" ] && dpkg --compare-versions "$version" ge 25 && compgen -G "$icd/lvp_icd*.json" >/dev/null; then return 0; fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || [ ! -r /etc/os-release ]; then
    echo "ci: lavapipe from Mesa >= 25 is missing (have: ${version:-none}) and cannot be installed here" >&2; return 1
  fi
  local codename candidate list host
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq -o Acquire::Retries=5
  candidate=$(apt-cache policy mesa-vulkan-drivers | awk '/Candidate:/ { print $2 }')
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && dpkg --compare-versions "$candidate" ge 25; then
    retry apt-get install -y -qq -o Acquire::Retries=5 mesa-vulkan-drivers; return
  fi
  list="/etc/apt/sources.list.d/ci-$codename-backports.sources"
  if [ ! -e "$list" ]; then
    # The URI of the entry for the release itself (deb822 .sources stanzas, else one-line sources.list entries).
    host=$(awk -v c="$codename" 'BEGIN { RS = ""; FS = "\n" } {
        uri = ""; hit = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
          if ($i ~ /^Suites:/ && (" " $i " ") ~ (" " c " ")) hit = 1
        }
        if (hit && uri != "") { print uri; exit }
      }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$host" ] || host=$(awk -v c="$codename" '$1 == "deb" { for (i = 2; i < NF; i++) if ($(i + 1) == c && $i !~ /^\[/) { print $i; exit } }' /etc/apt/sources.list 2>/dev/null || true)
    if [ -z "$host" ]; then echo "ci: no apt source for $codename to derive $codename-backports from" >&2; return 1; fi
    printf 'Types: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$host" "$codename" >"$list"
  fi
  retry apt-get update -qq -o Acquire::Retries=5 -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
  retry apt-get install -y -qq -o Acquire::Retries=5 -t "$codename-backports" mesa-vulkan-drivers
}
# A fresh CI machine fetches Mesa from the archive at test time: a failed fetch or a held dpkg lock is tried again
# (three times, 15 s apart) before the native-f16 test is left without its driver.
retry() {
  local attempt
  for attempt in 1 2 3; do
    "$@" && return 0
    [ "$attempt" = 3 ] || { echo "ci: '$*' failed (attempt $attempt of 3); trying again in 15 s" >&2; sleep 15; }
  done
  return 1
}
ensure_lavapipe
