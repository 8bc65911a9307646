import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

import { JSONSchema } from 'class-validator-jsonschema';
import { InvalidRequestError } from '../errors';
import { ENABLE_FALLBACK_DOC, FALLBACK_ALIAS_DOC, MESSAGES_DOC, RESPONSE_FORMAT_DOC, TOOL_CHOICE_DOC, TOOLS_DOC } from './api-request-docs';

/** Request bodies of the /v1 API (docs/gateway.md); snake_case like the rest of the wire format. */

const PROVIDER_NAME = /^[a-z0-9_-]{1,64}$/i;
const PROVIDER_MESSAGE = { message: '$property must be a provider name (letters, digits, "_" or "-")' };

/**
 * Several class-validator rules as one property decorator, applied in the order stacked decorators are
 * (the last first), so the metadata, and the order of the messages, is what the stacked form gives.
 */
function rules(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => {
    for (let index = decorators.length - 1; index >= 0; index--) decorators[index](target, key);
  };
}

/** Fields several bodies share (/v1 generation, embeddings, models, search/generate), defined once each. */
export const ProviderNameField = () => rules(IsOptional(), IsString(), Matches(PROVIDER_NAME, PROVIDER_MESSAGE));
export const ModelField = () => rules(IsOptional(), IsString(), MinLength(1), MaxLength(256));
export const MaxTokensField = () => rules(IsOptional(), IsInt(), Min(1), Max(1_000_000));
export const TemperatureField = () => rules(IsOptional(), IsNumber({ allowNaN: false, allowInfinity: false }), Min(0), Max(2));
export const OptionalFlagField = () => rules(IsOptional(), IsBoolean());

export class GenerateDto {
  /** Either `prompt` or `messages` (checked in the controller); the prompt is required when messages are absent. */
  @ValidateIf((body: GenerateDto) => body.messages === undefined || body.prompt !== undefined)
  @IsString()
  @MinLength(1)
  prompt?: string;

  /** The domain's message forms in snake_case (v1-messages.ts checks each field). */
  @JSONSchema(MESSAGES_DOC)
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  messages?: unknown[];

  @JSONSchema(TOOLS_DOC)
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  tools?: unknown[];

  @JSONSchema(TOOL_CHOICE_DOC)
  @IsOptional()
  tool_choice?: unknown;

  @JSONSchema({ description: 'false asks for at most one tool call per answer' })
  @OptionalFlagField()
  parallel_tool_calls?: boolean;

  @JSONSchema(RESPONSE_FORMAT_DOC)
  @IsOptional()
  response_format?: unknown;

  @JSONSchema({ description: 'Sampling seed, where the provider takes one (Mistral: random_seed)' })
  @IsOptional()
  @IsInt()
  seed?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-2)
  @Max(2)
  frequency_penalty?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-2)
  @Max(2)
  presence_penalty?: number;

  @ProviderNameField()
  provider?: string;

  @ModelField()
  model?: string;

  @MaxTokensField()
  max_tokens?: number;

  @TemperatureField()
  temperature?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  top_p?: number;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(4)
  @IsString({ each: true })
  stop?: string[];

  @IsOptional()
  @IsString()
  @MaxLength(16_384)
  system_prompt?: string;

  /** Context items: objects or strings rendered into the prompt's context section. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  context?: Array<Record<string, unknown> | string>;

  /** A JSON document source in the body: objects or strings, bounded by `documents:` (default 100 / 1 MiB). */
  @IsOptional()
  @IsArray()
  documents?: unknown[];

  /** Per-call switch for provider fallback; `fallback` is accepted as an alias. */
  @JSONSchema(ENABLE_FALLBACK_DOC)
  @OptionalFlagField()
  enable_fallback?: boolean;

  @JSONSchema(FALLBACK_ALIAS_DOC)
  @OptionalFlagField()
  fallback?: boolean;

  /** Server-sent events instead of one JSON body. */
  @OptionalFlagField()
  stream?: boolean;
}

export class EmbeddingDto {
  @IsString()
  @MinLength(1)
  input!: string;

  @ProviderNameField()
  provider?: string;

  @ModelField()
  model?: string;

  @JSONSchema(ENABLE_FALLBACK_DOC)
  @OptionalFlagField()
  enable_fallback?: boolean;

  @JSONSchema(FALLBACK_ALIAS_DOC)
  @OptionalFlagField()
  fallback?: boolean;
}

export class BatchEmbeddingDto {
  /** Bounded (docs/decisions.md B3: 1..32); the upper bound is re-checked against the configured limit. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1024)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  inputs!: string[];

  @ProviderNameField()
  provider?: string;

  @ModelField()
  model?: string;

  @JSONSchema(ENABLE_FALLBACK_DOC)
  @OptionalFlagField()
  enable_fallback?: boolean;

  @JSONSchema(FALLBACK_ALIAS_DOC)
  @OptionalFlagField()
  fallback?: boolean;
}

/**
 * The fallback switch of every /v1 route: `enable_fallback` (the name most bodies already used), with
 * `fallback` accepted as an alias; both given and different is a 400 naming them.
 */
export function fallbackSwitch(body: { enable_fallback?: boolean; fallback?: boolean }): boolean | undefined {
  if (body.enable_fallback !== undefined && body.fallback !== undefined && body.enable_fallback !== body.fallback) {
    throw new InvalidRequestError('enable_fallback and its alias fallback disagree; send one of them');
  }
  return body.enable_fallback ?? body.fallback;
}

export class ModelsQueryDto {
  @ProviderNameField()
  provider?: string;
}
