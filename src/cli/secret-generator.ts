import { randomBytes } from 'node:crypto';

export const SECRET_FORMATS = ['hex', 'base64', 'raw'] as const;
export type SecretFormat = (typeof SECRET_FORMATS)[number];

export const SECRET_DEFAULTS = { format: 'hex' as SecretFormat, length: 64, count: 1 };
export const SECRET_LENGTH_RANGE = { min: 16, max: 1024 };
export const SECRET_COUNT_RANGE = { min: 1, max: 1000 };

/** `length` random bytes from the operating system's CSPRNG. */
export function generateSecretBytes(length: number): Buffer {
  return randomBytes(length);
}

export function encodeSecret(bytes: Buffer, format: Exclude<SecretFormat, 'raw'>): string {
  return bytes.toString(format);
}

/** The header line printed unless --quiet: a comment, so `--env` output stays a valid .env file. */
export function secretHeader(length: number, format: SecretFormat, count: number): string {
  const what = count === 1 ? 'secret' : `${count} secrets`;
  return `# tollgate: ${what} of ${length} random bytes (${length * 8} bits of entropy each), ${format} format, from crypto.randomBytes`;
}

/** Strict decimal integer within [min, max]; undefined when the text is not one. */
export function parseBoundedInteger(text: string, min: number, max: number): number | undefined {
  if (!/^\d{1,7}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}
