import { IsBoolean, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

/**
 * Bodies of POST /v1/search and /v1/search/generate (seed 001 section 2.4, plus tool, fallback and model).
 * The configured bounds (query length, max limit) are checked again by SearchService.
 */

const NAME = /^[a-z0-9_-]{1,64}$/i;

export class SearchDto {
  @IsString()
  @MinLength(1)
  query!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @IsOptional()
  @IsString()
  @Matches(NAME, { message: '$property must be a tool name (letters, digits, "_" or "-")' })
  tool?: string;

  /** `false`: a capability group asks its first tool only (and /search/generate keeps to one provider). */
  @IsOptional()
  @IsBoolean()
  fallback?: boolean;
}

export class SearchGenerateDto extends SearchDto {
  @IsOptional()
  @IsString()
  @Matches(NAME, { message: '$property must be a provider name (letters, digits, "_" or "-")' })
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

  /** Server-sent events: `results`, then the generation's `delta` and `done` events. */
  @IsOptional()
  @IsBoolean()
  stream?: boolean;
}
