import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Body of POST /v1/agent (docs/search-agent-mcp.md): `tools` is the allowlist by name, required, and may be
 * empty. The configured bounds (task bytes, max loops) are checked again by AgentService.
 */
export class AgentDto {
  @IsString()
  @MinLength(1)
  prompt!: string;

  @IsOptional()
  @IsString()
  @Matches(NAME, { message: '$property must be a provider name (letters, digits, "_" or "-")' })
  provider?: string;

  @IsArray()
  @ArrayMaxSize(64)
  @Matches(NAME, { each: true, message: 'each value in $property must be a tool name (letters, digits, "_" or "-")' })
  tools!: string[];

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(50)
  max_loops?: number;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  model?: string;
}
