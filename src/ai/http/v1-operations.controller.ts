import { Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../errors';
import { AiClient, type GenerateOptions } from '../client/ai-client';
import type { DocumentBounds } from '../documents/document-source.interface';
import { DOCUMENT_BOUNDS } from '../documents/documents.constants';
import { MemoryDocumentSource } from '../documents/memory-document-source';
import type { ContextItem } from '../prompts/context-rendering';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { ApiGenerationResponses } from './api-docs';
import { BatchEmbeddingDto, EmbeddingDto, GenerateDto } from './api-dtos';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { apiBody, disconnectSignal } from './api-response';
import { createApiValidationPipe } from './api-validation.pipe';
import { writeGenerateStream } from './generate-stream';

/** Generation and embeddings; 200 on success, errors mapped once by ApiExceptionFilter. */
@Controller('v1')
@UseGuards(ApiAuthGuard)
@UseFilters(ApiExceptionFilter)
@UsePipes(createApiValidationPipe())
export class V1OperationsController {
  constructor(
    @Inject(AiClient) private readonly client: AiClient,
    @Inject(DOCUMENT_BOUNDS) private readonly documentBounds: DocumentBounds,
  ) {}

  /** Answers through `reply` itself: a stream takes over the raw response, which passthrough would answer again. */
  @Post('generate')
  @HttpCode(200)
  @ApiGenerationResponses()
  async generate(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: GenerateDto): Promise<void> {
    const documents = body.documents === undefined ? [] : await new MemoryDocumentSource(body.documents, 'documents', this.documentBounds).load();
    const items = [...contextItems(body.context), ...documents];
    const options: GenerateOptions = {
      provider: body.provider,
      model: body.model,
      maxTokens: body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      stop: body.stop,
      systemPrompt: body.system_prompt,
      enableFallback: body.enable_fallback,
      signal: disconnectSignal(reply),
    };
    if (body.stream === true) return writeGenerateStream(request, reply, this.client.streamResponse(body.prompt, items, options));
    const result = await this.client.generateResponse(body.prompt, items, options);
    reply.send(apiBody(request, { ...result }));
  }

  @Post('embeddings')
  @HttpCode(200)
  async embedding(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: EmbeddingDto) {
    const result = await this.client.generateEmbedding(body.input, {
      provider: body.provider,
      model: body.model,
      enableFallback: body.enable_fallback,
      signal: disconnectSignal(reply),
    });
    return apiBody(request, { ...result });
  }

  /** One upstream call for the batch where the provider takes arrays; 1..max_batch_inputs inputs. */
  @Post('embeddings/batch')
  @HttpCode(200)
  async batch(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: BatchEmbeddingDto) {
    const result = await this.client.generateEmbeddings(body.inputs, {
      provider: body.provider,
      model: body.model,
      enableFallback: body.enable_fallback,
      signal: disconnectSignal(reply),
    });
    return apiBody(request, { ...result, count: result.embeddings.length });
  }
}

/** Context items are strings or JSON objects; anything else is named by its index. */
function contextItems(items: unknown[] | undefined): ContextItem[] {
  return (items ?? []).map((item, index) => {
    if (typeof item === 'string' || (typeof item === 'object' && item !== null && !Array.isArray(item))) return item as ContextItem;
    throw new InvalidRequestError(`context[${index}] must be a string or an object`);
  });
}
