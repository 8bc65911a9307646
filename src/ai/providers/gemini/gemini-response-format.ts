import type { ResponseFormat } from '../ai-provider.interface';
import type { GeminiGenerationConfig } from './gemini-wire';

/**
 * json_object is `responseMimeType: application/json`; json_schema adds the schema as `responseJsonSchema`
 * (JSON Schema as given, decoding constrained to it, so `strict` holds). Gemini has no slot for the format's
 * name (a label only) or description, so a description goes into the schema when the schema has none.
 */
export function convertGeminiResponseFormat(format: ResponseFormat | undefined): Pick<GeminiGenerationConfig, 'responseMimeType' | 'responseJsonSchema'> {
  if (format === undefined || format.type === 'text') return {};
  if (format.type === 'json_object') return { responseMimeType: 'application/json' };
  const schema = format.description !== undefined && format.schema.description === undefined ? { ...format.schema, description: format.description } : format.schema;
  return { responseMimeType: 'application/json', responseJsonSchema: schema };
}
