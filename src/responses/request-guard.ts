// Who may call /v1, checked in one place before any route runs, by every host: the Responses handler (any host,
// a Node server included), the runtime the service worker mounts (the model routes: downloads and imports start
// only from requests that pass), and the service worker's fetch routing (which alone sees navigations' clients).
//
// - Cross-site requests are refused with 403 `cross_site_request`: a navigation (a link, or an auto-submitted
//   `<form method=POST enctype=text/plain>`, which would otherwise reach the worker with a body that parses as
//   JSON), a request whose client or referrer is a page of another origin, and on a Node host a request whose
//   `Origin` is another origin (or `null`) or whose `Sec-Fetch-Site` says `cross-site`/`same-site` without an
//   allowed `Origin`.
// - POST bodies must be `application/json` (any parameters): another declared type is a 415
//   `unsupported_media_type`; a body with no type at all is refused the same way when it is read
//   (request-checks.ts `readJsonBody`). `POST /v1/models/import` takes the raw model file and is exempt.
import { DomainError } from './errors.ts';

export interface RequestSource {
  /** The origin this host serves /v1 from; default: the request URL's own origin (what a Node host was addressed as). */
  origin?: string;
  /** Other origins whose pages may call (a Node host that serves the API to a page elsewhere). */
  allowedOrigins?: readonly string[];
  /** Whether the request is a navigation; default: `request.mode === 'navigate'` (what a service worker sees). */
  isNavigation?: boolean;
  /** The URL of the client (page or worker) that made the request, where the host knows it (a service worker). */
  clientUrl?: string | null;
}

/** Routes under /v1 whose POST body is not JSON. */
const RAW_BODY_ROUTES = /\/v1\/models\/import\/?$/;

/** The 403 or 415 this request gets, or null when it may go on. */
export function guardRequest(request: Request, source: RequestSource = {}): DomainError | null {
  const own = source.origin ?? originOf(request.url);
  const allowed = (origin: string | null): boolean => origin !== null && origin !== 'null' && (origin === own || (source.allowedOrigins ?? []).includes(origin));

  if (source.isNavigation ?? request.mode === 'navigate') {
    return crossSite('a navigation (a link or a form) cannot call the API; call it with fetch() from a page of this origin');
  }
  if (source.clientUrl !== undefined && source.clientUrl !== null && source.clientUrl !== '' && !allowed(originOf(source.clientUrl))) {
    return crossSite('the request comes from a page of another origin');
  }
  const referrer = request.referrer;
  if (referrer !== '' && referrer !== 'about:client' && referrer !== 'no-referrer') {
    const from = originOf(referrer);
    if (from !== null && !allowed(from)) return crossSite('the request comes from a page of another origin');
  }
  const origin = request.headers.get('origin');
  if (origin !== null && !allowed(origin.trim())) return crossSite('the request comes from a page of another origin');
  const site = request.headers.get('sec-fetch-site')?.trim().toLowerCase();
  if ((site === 'cross-site' || site === 'same-site') && !(origin !== null && allowed(origin.trim()))) {
    return crossSite('the request comes from another site');
  }

  if (request.method.toUpperCase() === 'POST' && !RAW_BODY_ROUTES.test(pathOf(request.url))) {
    const type = request.headers.get('content-type');
    if (type !== null && !isJsonMediaType(type)) return unsupportedMediaType(type);
  }
  return null;
}

/** `application/json`, with any parameters (`; charset=utf-8`), in any case. */
export function isJsonMediaType(contentType: string): boolean {
  return contentType.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

export function unsupportedMediaType(type: string | null): DomainError {
  const what = type === null ? 'a body without a Content-Type' : `Content-Type '${type.split(';', 1)[0]!.trim().slice(0, 100)}'`;
  return new DomainError('unsupported_media_type', `Unsupported media type: ${what}. Request bodies must be JSON, sent with Content-Type 'application/json'.`);
}

function crossSite(why: string): DomainError {
  return new DomainError('forbidden', `Cross-site request refused: ${why}.`, { code: 'cross_site_request' });
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
