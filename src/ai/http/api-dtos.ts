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
} from 'class-validator';

/** Request bodies of the /v1 API (seed 001 section 2.4); snake_case like the rest of the wire format. */

const PROVIDER_NAME = /^[a-z0-9_-]{1,64}$/i;
const PROVIDER_MESSAGE = { message: '$property must be a provider name (letters, digits, "_" or "-")' };

export class GenerateDto {
  @IsString()
  @MinLength(1)
  prompt!: string;

  @IsOptional()
  @IsString()
  @Matches(PROVIDER_NAME, PROVIDER_MESSAGE)
  provider?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  model?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  max_tokens?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(2)
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

  /** Per-call switch for provider fallback (seed: enable_fallback). */
  @IsOptional()
  @IsBoolean()
  enable_fallback?: boolean;

  /** Server-sent events instead of one JSON body. */
  @IsOptional()
  @IsBoolean()
  stream?: boolean;
}

export class EmbeddingDto {
  @IsString()
  @MinLength(1)
  input!: string;

  @IsOptional()
  @IsString()
  @Matches(PROVIDER_NAME, PROVIDER_MESSAGE)
  provider?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  model?: string;

  @IsOptional()
  @IsBoolean()
  enable_fallback?: boolean;
}

export class BatchEmbeddingDto {
  /** Bounded (DECISIONS.md B3: 1..32); the upper bound is re-checked against the configured limit. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1024)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  inputs!: string[];

  @IsOptional()
  @IsString()
  @Matches(PROVIDER_NAME, PROVIDER_MESSAGE)
  provider?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  model?: string;

  @IsOptional()
  @IsBoolean()
  enable_fallback?: boolean;
}

export class ModelsQueryDto {
  @IsOptional()
  @IsString()
  @Matches(PROVIDER_NAME, PROVIDER_MESSAGE)
  provider?: string;
}
