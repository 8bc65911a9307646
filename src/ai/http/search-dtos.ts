import { IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { MaxTokensField, ModelField, OptionalFlagField, ProviderNameField, TemperatureField } from './api-dtos';
import { FALLBACK_ALIAS_DOC } from './api-request-docs';

/**
 * Bodies of POST /v1/search and /v1/search/generate (docs/search-agent-mcp.md).
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

  /**
   * `false`: a capability group asks its first tool only (and /search/generate keeps to one provider).
   * `enable_fallback` is the name every /v1 route documents; `fallback` stays accepted as its alias.
   */
  @OptionalFlagField()
  enable_fallback?: boolean;

  @JSONSchema(FALLBACK_ALIAS_DOC)
  @OptionalFlagField()
  fallback?: boolean;
}

export class SearchGenerateDto extends SearchDto {
  @ProviderNameField()
  provider?: string;

  @ModelField()
  model?: string;

  @MaxTokensField()
  max_tokens?: number;

  @TemperatureField()
  temperature?: number;

  /** Server-sent events: `results`, then the generation's `delta` and `done` events. */
  @OptionalFlagField()
  stream?: boolean;
}
