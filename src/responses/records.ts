// Stored records are plain JSON.
import type { JsonValue } from '../store/types.ts';

/** A value's JSON form (undefined fields dropped), as the store keeps it. */
export function toJson<T>(value: T): T extends unknown[] ? JsonValue[] : { [key: string]: JsonValue } {
  return JSON.parse(JSON.stringify(value)) as T extends unknown[] ? JsonValue[] : { [key: string]: JsonValue };
}
