import { IsArray, IsIn, IsInt, IsNumber, IsOptional, IsString } from 'class-validator';

/**
 * Bodies of the admin keys API (docs/governance.md). Types only: the rules (positive budgets, globs,
 * periods, durations) are checked by validateKeySpec, whose messages name each field.
 */
export class UpdateKeyDto {
  @IsOptional()
  @IsString()
  name?: string | null;

  /** Globs on provider/model, e.g. ["openai/*", "anthropic/claude-*"]; null clears the list. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  models?: string[] | null;

  /** A budget in dollars per period; null clears the budget. */
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  budget_usd?: number | null;

  /** A budget in tokens per period; null clears the budget. */
  @IsOptional()
  @IsInt()
  budget_tokens?: number | null;

  @IsOptional()
  @IsIn(['day', 'month'])
  period?: 'day' | 'month';

  /** Requests per minute. */
  @IsOptional()
  @IsInt()
  rpm?: number | null;

  /** Tokens per minute. */
  @IsOptional()
  @IsInt()
  tpm?: number | null;

  /** Lifetime from now: 30d, 12h, 90m, 2w or 45s; null: never expires. */
  @IsOptional()
  @IsString()
  expires?: string | null;
}

export class CreateKeyDto extends UpdateKeyDto {
  @IsString()
  tenant!: string;

  @IsOptional()
  @IsString()
  sub_tenant?: string;
}
