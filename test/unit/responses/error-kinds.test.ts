// The one error vocabulary: every kind answers the status, type and code written here and in CONTRACT.md's
// "Errors" table; anything else is a generic 500; and no file in src/ builds an OpenAI error body by hand or
// classifies an error by its message text.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DomainError, ERROR_KINDS, EngineError, type ErrorKind } from '../../../src/common/engine-error.ts';
import { KIND_ANSWERS, MESSAGE_MAX_CHARS, errorResponse, isClientError, toApiError } from '../../../src/responses/errors.ts';
import { StoreError } from '../../../src/store/types.ts';
import { ModelFileError } from '../../../src/model-store/model-files.ts';

/** Written out by hand (not read from KIND_ANSWERS): the wire contract. */
const EXPECTED: Record<ErrorKind, [status: number, type: string, code: string | null]> = {
  invalid_request: [400, 'invalid_request_error', null],
  unauthorized: [401, 'invalid_request_error', null],
  forbidden: [403, 'invalid_request_error', 'cross_site_request'],
  not_found: [404, 'invalid_request_error', 'not_found'],
  method_not_allowed: [405, 'invalid_request_error', 'method_not_allowed'],
  conflict: [409, 'invalid_request_error', null],
  too_large: [413, 'invalid_request_error', 'request_too_large'],
  unsupported_media_type: [415, 'invalid_request_error', 'unsupported_media_type'],
  misdirected: [421, 'invalid_request_error', 'misdirected_request'],
  client_closed: [499, 'invalid_request_error', 'client_closed_request'],
  internal: [500, 'server_error', 'server_error'],
  upstream: [502, 'server_error', 'upstream_unreachable'],
  unavailable: [503, 'server_error', null],
  insufficient_storage: [507, 'server_error', 'insufficient_storage'],
  store_failed: [503, 'store_error', 'store_failed'],
  store_full: [507, 'store_error', 'store_quota'],
};

describe('error kinds', () => {
  it('the list of kinds is the table: every kind has an answer, no answer is for a kind that does not exist', () => {
    expect([...ERROR_KINDS].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(Object.keys(KIND_ANSWERS).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(ERROR_KINDS)('%s answers its documented status, type and default code, and keeps message and param', async (kind) => {
    const [status, type, code] = EXPECTED[kind];
    const answer = toApiError(new DomainError(kind, 'what happened', { param: 'some.field' }));
    expect(answer.status).toBe(status);
    expect(answer.body.error).toMatchObject({ type, code, param: 'some.field' });
    expect(answer.body.error.message).toContain('what happened');
    expect(isClientError(new DomainError(kind, 'x'))).toBe(status < 500);
    const response = errorResponse(new DomainError(kind, 'x', { code: 'own_code' }), { 'x-extra': '1' });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-extra')).toBe('1');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('own_code');
  });

  it("CONTRACT.md's Errors table says the same for every kind", () => {
    const contract = readFileSync('src/responses/CONTRACT.md', 'utf8');
    for (const kind of ERROR_KINDS) {
      const [status, type, code] = EXPECTED[kind];
      const row = contract.split('\n').find((line) => line.startsWith(`| \`${kind}\` |`));
      expect(row, kind).toBeDefined();
      const cells = row!.split('|').map((c) => c.trim().replace(/`/g, ''));
      expect(cells.slice(2, 5), kind).toEqual([String(status), type, code ?? 'null']);
    }
  });

  it('anything that is not a DomainError is a generic 500 that does not leak its message', () => {
    const answer = toApiError(new TypeError('secret path /home/x at line 3'));
    expect(answer.status).toBe(500);
    expect(answer.body.error).toMatchObject({ type: 'server_error', code: 'server_error', param: null });
    expect(answer.body.error.message).not.toContain('secret');
    expect(isClientError(new Error('x'))).toBe(false);
  });

  it('the layers’ own errors are DomainErrors: engine, store and model-file errors answer by kind', () => {
    expect(toApiError(new EngineError('invalid_request', 'too long', { code: 'context_length_exceeded', param: 'input' }))).toMatchObject({
      status: 400,
      body: { error: { code: 'context_length_exceeded', param: 'input', type: 'invalid_request_error' } },
    });
    const quota = toApiError(new StoreError('disk full', 'quota'));
    expect(quota).toMatchObject({ status: 507, body: { error: { type: 'store_error', code: 'store_quota', param: 'store', message: 'Response storage failed: disk full' } } });
    expect(toApiError(new StoreError('no IndexedDB', 'unavailable')).body.error.code).toBe('store_unavailable');
    expect(toApiError(new ModelFileError('sha256 differs', 'upstream', 'model_checksum_mismatch'))).toMatchObject({ status: 502, body: { error: { code: 'model_checksum_mismatch', type: 'server_error' } } });
  });

  it('bounds the message and the param', () => {
    const answer = toApiError(new DomainError('invalid_request', 'x'.repeat(5000), { param: 'p'.repeat(5000) }));
    expect(answer.body.error.message.length).toBeLessThan(MESSAGE_MAX_CHARS + 40);
    expect(answer.body.error.param!.length).toBeLessThan(400);
  });
});

describe('one error edge', () => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push(path);
    }
  };
  walk('src');

  it('no file but errors.ts writes an OpenAI error type (so none builds an error body by hand)', () => {
    const offenders = files.filter((f) => f !== join('src', 'responses', 'errors.ts') && /type: '(invalid_request_error|server_error|store_error)'/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('no file classifies an error by testing its message with a regex', () => {
    const pattern = /\/[^/\n]+\/[a-z]*\.test\(\s*(?:\(?\s*)?(?:e|err|error)\b[^)]*\.message|\.message\.match\(/;
    const offenders = files.filter((f) => pattern.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
