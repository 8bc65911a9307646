import 'reflect-metadata';
import { type ArgumentMetadata, type Type, ValidationPipe } from '@nestjs/common';
import { IsDefined, IsString, ValidateNested } from 'class-validator';
import { BatchEmbeddingDto, EmbeddingDto, GenerateDto } from './api-dtos';
import { SearchGenerateDto } from './search-dtos';
import { apiRequestError } from '../../http/api-error';
import { acceptPlainBody, createApiValidationPipe, describeValidationErrors, readBodyRules } from './api-validation.pipe';

/** Nest's ValidationPipe with the API's options: the reference for every outcome. */
function referencePipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => apiRequestError(400, describeValidationErrors(errors).join('; ')),
  });
}

async function outcome(pipe: ValidationPipe, metatype: Type, body: unknown) {
  const metadata: ArgumentMetadata = { type: 'body', metatype, data: undefined };
  try {
    const value = await pipe.transform(structuredClone(body), metadata);
    return { value, proto: Object.getPrototypeOf(value), keys: Object.keys(value as object) };
  } catch (error) {
    return { error: (error as { getResponse(): unknown }).getResponse() };
  }
}

const valid: Array<[Type, unknown]> = [
  [GenerateDto, { prompt: 'Say hello' }],
  [GenerateDto, { prompt: 'x', provider: 'openai', model: 'gpt-4o', max_tokens: 10, temperature: 0.5, top_p: 1, stop: ['a', 'b'] }],
  [GenerateDto, { prompt: 'x', system_prompt: '', enable_fallback: false, provider: null }],
  [GenerateDto, { prompt: '\u{1F600}', stop: [] }],
  [GenerateDto, { prompt: '\uFE0F' }],
  [EmbeddingDto, { input: 'Say hello' }],
  [EmbeddingDto, { input: 'x', provider: 'a-b_c', model: 'm', enable_fallback: true }],
  [BatchEmbeddingDto, { inputs: ['a', 'b'] }],
  [SearchGenerateDto, { query: 'q', limit: 5, tool: 'searxng', fallback: false, max_tokens: 3 }],
];

const invalid: Array<[Type, unknown]> = [
  [GenerateDto, {}],
  [GenerateDto, { prompt: '' }],
  [GenerateDto, { prompt: 1 }],
  [GenerateDto, { prompt: 'x', extra: 1 }],
  [GenerateDto, { prompt: 'x', provider: 'bad name' }],
  [GenerateDto, { prompt: 'x', max_tokens: 1.5 }],
  [GenerateDto, { prompt: 'x', max_tokens: 0 }],
  [GenerateDto, { prompt: 'x', temperature: 3 }],
  [GenerateDto, { prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }],
  [GenerateDto, { prompt: 'x', stop: [1] }],
  [GenerateDto, { prompt: 'x', stop: 'a' }],
  [GenerateDto, { prompt: 'x', enable_fallback: 'yes' }],
  [GenerateDto, { prompt: 'x', model: 'm'.repeat(257) }],
  [GenerateDto, { prompt: null }],
  [GenerateDto, null],
  [GenerateDto, 'prompt'],
  [GenerateDto, [{ prompt: 'x' }]],
  [EmbeddingDto, { input: ['a'] }],
  [BatchEmbeddingDto, { inputs: [] }],
  [BatchEmbeddingDto, { inputs: ['a', ''] }],
  [BatchEmbeddingDto, { inputs: 'a' }],
];

/** Valid, but beyond what the quick check vouches for (nested values): the full pipe decides. */
const nested: Array<[Type, unknown]> = [
  [GenerateDto, { prompt: 'x', context: [{ title: 't', constructor: 'c', prototype: 'p' }, 'plain'] }],
  [GenerateDto, { prompt: 'x', documents: [{ id: 1, text: 't' }] }],
  [GenerateDto, { prompt: 'x', stop: [['a']] }],
];

describe('ApiValidationPipe', () => {
  it.each([...valid, ...invalid, ...nested])('answers %p %j exactly like ValidationPipe', async (metatype, body) => {
    expect(await outcome(createApiValidationPipe(), metatype, body)).toEqual(await outcome(referencePipe(), metatype, body));
  });

  it.each(valid)('accepts a plain valid %p body without the full pipe', (metatype, body) => {
    const rules = readBodyRules(metatype)!;
    expect(rules).not.toBeNull();
    const accepted = acceptPlainBody(metatype, rules, body);
    expect(accepted).toBeInstanceOf(metatype);
    expect(accepted).toMatchObject(body as object);
  });

  it.each([...invalid, ...nested])('leaves %p %j to the full pipe', (metatype, body) => {
    expect(acceptPlainBody(metatype, readBodyRules(metatype)!, body)).toBeUndefined();
  });

  it('copies arrays, so the DTO never shares them with the parsed body', () => {
    const body = { prompt: 'x', stop: ['a'] };
    const accepted = acceptPlainBody(GenerateDto, readBodyRules(GenerateDto)!, body) as GenerateDto;
    expect(accepted.stop).toEqual(['a']);
    expect(accepted.stop).not.toBe(body.stop);
  });

  it('has no quick rules for DTOs with nested, always-required or undecorated fields', () => {
    class Inner {
      @IsString() name!: string;
    }
    class Nested {
      @ValidateNested() inner!: Inner;
    }
    class Defined {
      @IsDefined() name!: string;
    }
    class Undecorated {
      @IsString() name!: string;
      note?: string;
    }
    expect(readBodyRules(Nested)).toBeNull();
    expect(readBodyRules(Defined)).toBeNull();
    expect(readBodyRules(Undecorated)).toBeNull();
  });
});
