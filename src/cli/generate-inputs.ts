/**
 * `tollgate generate`'s structured-output and image flags in the domain's terms. Each mistake is a
 * UsageError naming the flag (exit 2).
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { ContentPart, ResponseFormat, ToolChoice, ToolDefinition } from '../ai/providers/ai-provider.interface';
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

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * `--tools`: a JSON file holding an array of tools, each `{name, description?, parameters?, strict?}` or
 * OpenAI's `{type: "function", function: {...}}` (so a file written for the OpenAI API works as it is).
 */
export function toolsFlag(value: string): ToolDefinition[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(value, 'utf8'));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : error instanceof SyntaxError ? 'not valid JSON' : 'cannot be read';
    throw new UsageError(`--tools must be a JSON file of tool definitions (${value}: ${why})`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw new UsageError(`--tools ${value}: must hold a non-empty array of tools`);
  return parsed.map((entry: unknown, index) => {
    const tool = (isRecord(entry) && entry.type === 'function' && isRecord(entry.function) ? entry.function : entry) as Record<string, unknown>;
    const at = `--tools ${value}: [${index}]`;
    if (!isRecord(tool) || typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) throw new UsageError(`${at}.name must be 1-64 letters, digits, _ or -`);
    if (tool.description !== undefined && typeof tool.description !== 'string') throw new UsageError(`${at}.description must be a string`);
    if (tool.parameters !== undefined && !isRecord(tool.parameters)) throw new UsageError(`${at}.parameters must be a JSON Schema object`);
    if (tool.strict !== undefined && typeof tool.strict !== 'boolean') throw new UsageError(`${at}.strict must be true or false`);
    return {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description as string } : {}),
      ...(tool.parameters !== undefined ? { parameters: tool.parameters as Record<string, unknown> } : {}),
      ...(tool.strict !== undefined ? { strict: tool.strict as boolean } : {}),
    };
  });
}

/** `--tool-choice`: auto, none, required, or the name of one tool the model must call. */
export function toolChoiceFlag(value: string): ToolChoice {
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (TOOL_NAME.test(value)) return { name: value };
  throw new UsageError(`--tool-choice must be auto, none, required or a tool name (got "${value}")`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
