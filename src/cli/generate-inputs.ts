/**
 * `tollgate generate`'s structured-output and image flags in the domain's terms. Each mistake is a
 * UsageError naming the flag (exit 2).
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { ContentPart, ResponseFormat } from '../ai/providers/ai-provider.interface';
import { DEFAULT_MAX_IMAGE_BYTES } from '../ai/providers/image-fetch';
import { UsageError } from './cli.errors';

const IMAGE_MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/**
 * `--response-format`: `text`, `json_object`, or the path of a JSON Schema file (json_schema, named after
 * the file: the name providers require is 1-64 letters, digits, `_` or `-`).
 */
export function responseFormatFlag(value: string): ResponseFormat {
  if (value === 'text' || value === 'json_object') return { type: value };
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(value, 'utf8'));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : error instanceof SyntaxError ? 'not valid JSON' : 'cannot be read';
    throw new UsageError(`--response-format must be text, json_object or a JSON Schema file (${value}: ${why})`);
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new UsageError(`--response-format ${value}: the JSON Schema must be an object`);
  }
  const name = basename(value, extname(value)).replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'response';
  return { type: 'json_schema', name, schema: schema as Record<string, unknown> };
}

/** `--image`: an http(s) URL as given (the provider or the guarded fetcher reads it), or a local image file inlined. */
export function imageFlag(value: string): ContentPart {
  if (/^https?:\/\//i.test(value)) return { type: 'image', image: { kind: 'url', url: value } };
  const mediaType = IMAGE_MEDIA_TYPES[extname(value).toLowerCase()];
  // Another scheme (ftp://, file://) is neither a URL the fetcher takes nor a local path.
  if (mediaType === undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new UsageError(`--image must be an http(s) URL or a .png, .jpg, .jpeg, .gif or .webp file (got "${value}")`);
  }
  let size: number;
  try {
    size = statSync(value).size;
  } catch {
    throw new UsageError(`--image ${value}: no such file`);
  }
  if (size > DEFAULT_MAX_IMAGE_BYTES) throw new UsageError(`--image ${value}: larger than ${DEFAULT_MAX_IMAGE_BYTES / (1024 * 1024)} MB`);
  return { type: 'image', image: { kind: 'base64', mediaType, data: readFileSync(value).toString('base64') } };
}
