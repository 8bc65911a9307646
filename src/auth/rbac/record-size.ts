/**
 * The size limit of the RBAC record (issue 16). A record is parsed, serialised and compiled on the event
 * loop, so its size bounds how long every request of the process waits while a new one loads. Pure.
 */

/** 1 MiB of compact JSON: some 30,000 permissions, which stall the process about 60 ms while they load. */
export const DEFAULT_RBAC_RECORD_MAX_BYTES = 1_048_576;

/** Refused by `setRecord` (and so by `tollgate rbac load`); the stored record is left as it was. */
export class RbacRecordTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`the RBAC record is ${bytes} bytes as JSON, more than rbac_record_max_bytes (${limit})`);
    this.name = 'RbacRecordTooLargeError';
  }
}

/**
 * A lower bound of the size of `value` as compact JSON in UTF-8 bytes (a UTF-16 code unit never takes
 * fewer), counted only until it passes `limit`: refusing an oversized record costs no more than reading
 * one at the limit, however large it is. Iterative, so deep nesting cannot overflow the stack.
 */
export function jsonBytesAtLeast(value: unknown, limit: number): number {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && bytes <= limit) {
    const item = pending.pop();
    if (typeof item === 'string') {
      bytes += item.length + 2;
    } else if (Array.isArray(item)) {
      // Brackets and commas: 2 + (n - 1), counted before the elements so a long array stops at once.
      bytes += item.length === 0 ? 2 : item.length + 1;
      for (let index = 0; index < item.length && bytes <= limit; index++) pending.push(item[index]);
    } else if (item !== null && typeof item === 'object') {
      // The opening brace; each member adds quotes, colon and a comma (the last comma stands for `}`).
      bytes += 1;
      let members = 0;
      for (const key in item) {
        const member = (item as Record<string, unknown>)[key];
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
        members += 1;
        bytes += key.length + 4;
        pending.push(member);
        if (bytes > limit) break;
      }
      if (members === 0) bytes += 1;
    } else if (item !== undefined && typeof item !== 'function' && typeof item !== 'symbol') {
      bytes += String(item).length;
    }
  }
  return bytes;
}
