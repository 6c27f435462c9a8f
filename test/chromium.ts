// The one place that says which Chromium the tests drive and with which flags (README.md, "GPU facts on these machines").
import { existsSync } from 'node:fs';
import { chromiumArgs as flags } from '../tools/chromium-flags.mjs';

export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(
      `Chromium not found at ${path}. Install Debian's package: apt-get install -y chromium (or set CHROMIUM_PATH).`,
    );
  }
  return path;
}

/** Flags that give headless Chromium a WebGPU adapter on this kind of machine and keep it off the network. */
export function chromiumArgs(extra: string[] = []): string[] {
  return flags(extra);
}
