// Points Dawn (the `webgpu` package) at Mesa's lavapipe instead of Chromium's SwiftShader, for the tests of the
// native `shader-f16` path: lavapipe from Mesa 25 (Debian bookworm-backports' mesa-vulkan-drivers 25.0.7; .ci/run
// installs it) has `shader-f16`; SwiftShader has not, and bookworm's own Mesa 22.3.6 gives Dawn no adapter at all.
// Import this module before anything that imports 'webgpu': the Vulkan loader reads VK_ICD_FILENAMES when Dawn
// makes its instance. Chromium's libvulkan on LD_LIBRARY_PATH (vitest.config.ts) loads lavapipe as well.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ICD_DIR = '/usr/share/vulkan/icd.d';

/** lavapipe's Vulkan driver manifest (Mesa 25 names it lvp_icd.json, Mesa 22 lvp_icd.x86_64.json), or null. */
export const lavapipeIcd: string | null = existsSync(ICD_DIR)
  ? (readdirSync(ICD_DIR).filter((f) => /^lvp_icd.*\.json$/.test(f)).sort().map((f) => join(ICD_DIR, f))[0] ?? null)
  : null;

if (lavapipeIcd) process.env.VK_ICD_FILENAMES = lavapipeIcd;

/** What a test says when lavapipe (with shader-f16) is not there. */
export const LAVAPIPE_INSTALL =
  "Mesa's lavapipe with shader-f16 is needed (Mesa 25: on Debian bookworm, mesa-vulkan-drivers from bookworm-backports; .ci/run installs it)";
