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
import { BatchEmbeddingDto, EmbeddingDto, GenerateDto, fallbackSwitch } from './api-dtos';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { apiBody, disconnectSignal } from './api-response';
import { createApiValidationPipe } from './api-validation.pipe';
import { writeGenerateStream } from './generate-stream';
import { toDomainMessages, toDomainResponseFormat, toDomainToolChoice, toDomainTools } from './v1-messages';

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
    if (body.messages !== undefined && body.prompt !== undefined) {
      throw new InvalidRequestError('send either prompt or messages, not both');
    }
    if (body.messages !== undefined && (body.context !== undefined || body.documents !== undefined || body.system_prompt !== undefined)) {
      throw new InvalidRequestError('context, documents and system_prompt go with prompt; with messages, put them in the messages');
    }
    const options: GenerateOptions = {
      provider: body.provider,
      model: body.model,
      maxTokens: body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      stop: body.stop,
      systemPrompt: body.system_prompt,
      tools: body.tools === undefined ? undefined : toDomainTools(body.tools),
      toolChoice: body.tool_choice === undefined ? undefined : toDomainToolChoice(body.tool_choice),
      parallelToolCalls: body.parallel_tool_calls,
      responseFormat: body.response_format === undefined ? undefined : toDomainResponseFormat(body.response_format),
      seed: body.seed,
      frequencyPenalty: body.frequency_penalty,
      presencePenalty: body.presence_penalty,
      enableFallback: fallbackSwitch(body),
      signal: disconnectSignal(reply),
    };
    if (body.messages !== undefined) {
      const messages = toDomainMessages(body.messages);
      if (body.stream === true) return writeGenerateStream(request, reply, this.client.streamMessages(messages, options));
      reply.send(apiBody(request, { ...(await this.client.generateMessages(messages, options)) }));
      return;
    }
    const prompt = body.prompt as string;
    const documents = body.documents === undefined ? [] : await new MemoryDocumentSource(body.documents, 'documents', this.documentBounds).load();
    const items = [...contextItems(body.context), ...documents];
    if (body.stream === true) return writeGenerateStream(request, reply, this.client.streamResponse(prompt, items, options));
    const result = await this.client.generateResponse(prompt, items, options);
    reply.send(apiBody(request, { ...result }));
  }

  @Post('embeddings')
  @HttpCode(200)
  async embedding(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: EmbeddingDto) {
    const result = await this.client.generateEmbedding(body.input, {
      provider: body.provider,
      model: body.model,
      enableFallback: fallbackSwitch(body),
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
      enableFallback: fallbackSwitch(body),
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
