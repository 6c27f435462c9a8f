// Sealing of state a client carries for us: a reasoning item's `encrypted_content` and a compaction item.
// Authenticated encryption (AES-GCM through WebCrypto) with the store's non-extractable key.
//
// Blob format, base64 (standard alphabet, padded):  [version 0x01][12-byte IV][ciphertext + 16-byte GCM tag]
// The additional authenticated data is `webgpu-responses/<purpose>/v1`, so a reasoning blob cannot be passed
// off as a compaction and the other way round. A blob is opened only if its base64 length is within the bound
// that `maxPlaintextBytes` implies, checked before anything is decoded; a tampered, foreign (other key) or
// oversize blob is a 400 naming the item, never a crash and never unbounded memory.
import { badRequest } from './errors.ts';

export interface ReasoningSealer {
  seal(text: string): Promise<string>;
  /** `param` names the item the blob came from (e.g. `input[2].encrypted_content`) in the 400 it may throw. */
  open(blob: string, param: string): Promise<string>;
}

export const SEAL_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The default bound on a sealed text: 1 MiB of UTF-8. */
export const DEFAULT_MAX_SEALED_BYTES = 1024 * 1024;

export interface SealerOptions {
  purpose: 'reasoning' | 'compaction';
  maxPlaintextBytes?: number;
}

export function createAesGcmSealer(key: () => Promise<CryptoKey>, options: SealerOptions): ReasoningSealer {
  const maxPlaintext = options.maxPlaintextBytes ?? DEFAULT_MAX_SEALED_BYTES;
  const maxBlobBytes = 1 + IV_BYTES + maxPlaintext + TAG_BYTES;
  const maxBase64Chars = Math.ceil(maxBlobBytes / 3) * 4;
  const additionalData = new TextEncoder().encode(`webgpu-responses/${options.purpose}/v${SEAL_VERSION}`);
  const what = options.purpose === 'reasoning' ? 'encrypted reasoning' : 'compaction';

  return {
    async seal(text) {
      const plain = new TextEncoder().encode(text);
      if (plain.byteLength > maxPlaintext) {
        throw new Error(`${what} of ${plain.byteLength} bytes is over the ${maxPlaintext}-byte bound`);
      }
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData }, await key(), plain),
      );
      const blob = new Uint8Array(1 + IV_BYTES + sealed.byteLength);
      blob[0] = SEAL_VERSION;
      blob.set(iv, 1);
      blob.set(sealed, 1 + IV_BYTES);
      return toBase64(blob);
    },

    async open(blob, param) {
      if (blob.length > maxBase64Chars) {
        throw badRequest(`The ${what} in '${param}' is larger than this server accepts (${maxPlaintext} bytes).`, param, 'invalid_encrypted_content');
      }
      const bytes = fromBase64(blob);
      if (bytes === null || bytes.byteLength < 1 + IV_BYTES + TAG_BYTES) {
        throw badRequest(`The ${what} in '${param}' is not a valid sealed blob.`, param, 'invalid_encrypted_content');
      }
      if (bytes[0] !== SEAL_VERSION) {
        throw badRequest(`The ${what} in '${param}' has an unknown format version ${bytes[0]}.`, param, 'invalid_encrypted_content');
      }
      let plain: ArrayBuffer;
      try {
        plain = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: bytes.slice(1, 1 + IV_BYTES), additionalData },
          await key(),
          bytes.slice(1 + IV_BYTES),
        );
      } catch {
        throw badRequest(
          `The ${what} in '${param}' could not be decrypted: it was altered, or sealed by another server or key.`,
          param,
          'invalid_encrypted_content',
        );
      }
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(plain);
      } catch {
        throw badRequest(`The ${what} in '${param}' is not valid UTF-8.`, param, 'invalid_encrypted_content');
      }
    },
  };
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
