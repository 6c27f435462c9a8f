// Makes sure the system Chromium the tests drive is there. It never downloads a browser build of its own:
// where it can (root on Debian) it installs Debian's `chromium` package, otherwise it stops with the command to run.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function ensureChromium() {
  if (existsSync(chromiumPath)) return chromiumPath;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const isDebian = existsSync('/etc/debian_version') && existsSync('/usr/bin/apt-get');
  if (process.env.CHROMIUM_PATH || !isRoot || !isDebian) {
    console.error(
      `Chromium is missing at ${chromiumPath}. Install Debian's package with:\n  sudo apt-get install -y chromium\n` +
        '(or set CHROMIUM_PATH to a Chromium/Chrome binary).',
    );
    process.exit(1);
  }
  console.error("Chromium is missing: installing Debian's chromium package (apt-get install -y chromium)...");
  // Acquire::Retries: apt tries a failed fetch from the archive again (a fresh CI machine installs this at test time).
  execFileSync('apt-get', ['update', '-o', 'Acquire::Retries=5'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', '-o', 'Acquire::Retries=5', 'chromium'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (!existsSync(chromiumPath)) {
    console.error(`apt-get finished but ${chromiumPath} is still missing.`);
    process.exit(1);
  }
  return chromiumPath;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(ensureChromium());
