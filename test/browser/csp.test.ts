// The app pages' Content-Security-Policy (issue 22 item 11): index.html and the web IDE state the policy built
// from the model catalog (connect-src 'self' plus the catalog's hosts, no inline script), and the service
// worker's app shell answers pages with it as a header, frame-ancestors 'self' included.
import { afterEach, describe, expect, it } from 'vitest';
import demoHtml from '../../index.html?raw';
import ideHtml from '../../examples/web-ide/index.html?raw';
import { createAppShell } from '../../src/sw/app-shell.ts';
import { appContentSecurityPolicy, catalogOrigins, remoteCatalog } from '../../src/model-store/remote-catalog.ts';

const pages = { 'index.html': demoHtml as string, 'examples/web-ide/index.html': ideHtml as string };

function metaPolicy(html: string): string | null {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  return doc.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? null;
}

function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name, values]));
}

describe('Content-Security-Policy of the app pages', () => {
  for (const [name, html] of Object.entries(pages)) {
    it(`${name} states the app policy in a <meta> tag, first in <head>`, () => {
      const policy = metaPolicy(html);
      expect(policy).toBe(appContentSecurityPolicy());
      const doc = new DOMParser().parseFromString(html, 'text/html');
      expect(doc.head.firstElementChild?.getAttribute('charset')).toBe('utf-8');
      expect(doc.head.children[1]?.getAttribute('http-equiv')).toBe('Content-Security-Policy');
    });

    it(`${name} has no inline script, event handler attribute or javascript: URL`, () => {
      const doc = new DOMParser().parseFromString(html, 'text/html');
      const scripts = [...doc.querySelectorAll('script')];
      expect(scripts.length).toBeGreaterThan(0);
      for (const script of scripts) {
        expect(script.getAttribute('src')).toBeTruthy();
        expect(script.textContent?.trim()).toBe('');
      }
      for (const element of doc.querySelectorAll('*')) {
        for (const attribute of element.attributes) {
          expect(attribute.name.startsWith('on'), `${element.tagName} ${attribute.name}`).toBe(false);
          expect(/^\s*javascript:/i.test(attribute.value)).toBe(false);
        }
      }
      expect(doc.querySelectorAll('style, [style]').length).toBe(0);
    });
  }

  it("allows no inline or eval'd script, and connects only to 'self' and the catalog's model hosts", () => {
    const policy = directives(appContentSecurityPolicy());
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    const hosts = [...new Set(remoteCatalog.map((e) => new URL(e.file).origin))].sort();
    expect(hosts.length).toBeGreaterThan(0);
    expect(catalogOrigins()).toEqual(hosts);
    expect(policy.get('connect-src')).toEqual(["'self'", ...hosts]);
    // frame-ancestors is a header-only directive: the <meta> form leaves it out, the header adds it.
    expect(policy.has('frame-ancestors')).toBe(false);
    expect(directives(appContentSecurityPolicy({ header: true })).get('frame-ancestors')).toEqual(["'self'"]);
  });
});

describe("the service worker's app shell", () => {
  const scope = new URL('/csp-shell-test/', location.href).href;
  const version = `csp-test-${Math.random().toString(36).slice(2)}`;

  afterEach(async () => {
    await caches.delete(`webgpu-responses-shell-${version}`);
    const meta = await caches.open('webgpu-responses-shell-meta');
    await meta.delete(new URL('precache-manifest.json', scope).href);
  });

  it('answers a page with the CSP header (frame-ancestors included) and a script without one', async () => {
    const meta = await caches.open('webgpu-responses-shell-meta');
    await meta.put(new URL('precache-manifest.json', scope).href, new Response(JSON.stringify({ version, files: [] })));
    const cache = await caches.open(`webgpu-responses-shell-${version}`);
    await cache.put(new URL('index.html', scope).href, new Response('<!doctype html><title>x</title>', { headers: { 'content-type': 'text/html; charset=utf-8' } }));
    await cache.put(new URL('app.js', scope).href, new Response('export {}', { headers: { 'content-type': 'text/javascript' } }));
    const shell = createAppShell(scope);

    const page = await shell.respond(new Request(scope));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(appContentSecurityPolicy({ header: true }));
    expect(await page.text()).toContain('<title>x</title>');

    const script = await shell.respond(new Request(new URL('app.js', scope).href));
    expect(script.headers.get('content-security-policy')).toBeNull();
  });
});
