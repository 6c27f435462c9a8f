// Creation of the reasoning key: an AES-GCM 256 key that WebCrypto will never export,
// shared by the memory store and the IndexedDB store so both make the same kind of key.

export const REASONING_KEY_ALGORITHM = { name: 'AES-GCM', length: 256 } as const;

/** A fresh non-extractable AES-GCM 256 key usable for encrypt and decrypt. */
export function generateReasoningKey(): Promise<CryptoKey> {
  return crypto.subtle.generateKey(REASONING_KEY_ALGORITHM, false, ['encrypt', 'decrypt']);
}
