/** The parts of Gemini's v1beta request body Tollgate sends (docs/wire-formats.md, Gemini). */

export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role?: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** JSON Schema as the caller gave it (the `parameters` field would take only Google's OpenAPI subset). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
}

export interface GeminiGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
}

export interface GeminiGenerateBody {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

/**
 * Gemini 3 models sign each functionCall part (`thoughtSignature`, sibling of `functionCall`) and refuse a
 * replayed call turn without it (400 "Function call is missing a thought_signature"). OpenAI-shaped clients
 * keep only the call id, so the signature travels inside it, after this separator, and is split off again.
 */
export const THOUGHT_SIGNATURE_SEPARATOR = '__thought__';

/** Upstream enum values (finish reasons, statuses) pass only as plain tokens. */
export function enumToken(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(value) ? value : undefined;
}
