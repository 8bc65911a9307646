import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AI_MODULE_OPTIONS } from '../../ai.constants';
import { AI_DEFAULTS } from '../../ai.defaults';
import type { AiModuleOptions } from '../../ai-module-options.interface';
import { AiClient, type GenerateOptions } from '../../client/ai-client';
import { ApiAuthGuard } from '../../../http/api-auth.guard';
import { disconnectSignal } from '../api-response';
import { ApiChatCompletionDocs, ApiEmbeddingsDocs, ApiModelDocs, ApiModelsDocs } from './openai-docs';
import { OpenAiExceptionFilter } from './openai-exception.filter';
import {
  chatMessages,
  OpenAiRequestError,
  parseChatRequest,
  parseEmbeddingsRequest,
  responseFormat,
  stopSequences,
  toolChoice,
  toolDefinitions,
} from './openai-requests';
import { ModelNotFoundError } from '../../errors';
import { chatCompletionBody, embeddingsBody, modelObject, modelsBody, qualifiedModel } from './openai-responses';
import { writeChatStream } from './openai-stream';
import { estimateTokens } from '../../client/model-call';
import type { TokenUsage } from '../../providers/ai-provider.interface';

/**
 * OpenAI's chat completions, embeddings and models under `/openai/v1`, so OpenAI clients can use the gateway
 * as their base URL. The same AiClient does the work (retries, fallback, events) and the same API hook
 * guards it; bodies and errors are OpenAI's shapes.
 */
@Controller('openai/v1')
@UseGuards(ApiAuthGuard)
@UseFilters(OpenAiExceptionFilter)
export class OpenAiCompatController {
  private readonly maxBatchInputs: number;

  constructor(
    @Inject(AiClient) private readonly client: AiClient,
    @Inject(AI_MODULE_OPTIONS) options: AiModuleOptions,
  ) {
    this.maxBatchInputs = options.maxBatchInputs ?? AI_DEFAULTS.maxBatchInputs;
  }

  /** Answers through `reply` itself: a stream takes over the raw response, which passthrough would answer again. */
  @Post('chat/completions')
  @HttpCode(200)
  @ApiChatCompletionDocs()
  async chatCompletions(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: unknown): Promise<void> {
    const chat = parseChatRequest(body);
    const options: GenerateOptions = {
      model: chat.model,
      maxTokens: chat.max_completion_tokens ?? chat.max_tokens,
      temperature: chat.temperature,
      topP: chat.top_p,
      stop: stopSequences(chat.stop),
      tools: toolDefinitions(chat.tools),
      toolChoice: toolChoice(chat.tool_choice),
      parallelToolCalls: chat.parallel_tool_calls,
      responseFormat: responseFormat(chat.response_format),
      seed: chat.seed,
      frequencyPenalty: chat.frequency_penalty,
      presencePenalty: chat.presence_penalty,
      signal: disconnectSignal(reply),
    };
    const messages = chatMessages(chat.messages);
    if (chat.stream === true) {
      const { target } = this.client.routeModel(options);
      const requested = target.model === undefined ? chat.model : qualifiedModel(target.provider, target.model);
      const includeUsage = chat.stream_options?.include_usage === true;
      return writeChatStream(request, reply, this.client.streamMessages(messages, options), requested, includeUsage);
    }
    const result = await this.client.generateMessages(messages, options);
    reply.send(
      chatCompletionBody({
        provider: result.provider,
        model: result.model,
        text: result.response,
        finishReason: result.finishReason,
        usage: result.usage,
        toolCalls: result.toolCalls,
      }),
    );
  }

  @Post('embeddings')
  @HttpCode(200)
  @ApiEmbeddingsDocs()
  async embeddings(@Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown) {
    const embed = parseEmbeddingsRequest(body);
    const inputs = typeof embed.input === 'string' ? [embed.input] : embed.input;
    if (inputs.length > this.maxBatchInputs) {
      throw new OpenAiRequestError(`Invalid value for 'input': at most ${this.maxBatchInputs} inputs per request.`, 'input', 'invalid_value');
    }
    const result = await this.client.generateEmbeddings(inputs, { model: embed.model, signal: disconnectSignal(reply) });
    return embeddingsBody(result.embeddings, result.provider, result.model, embed.encoding_format ?? 'float', promptTokens(result.usage, inputs));
  }

  /**
   * Every provider's models as `provider/model` ids, then the aliases; a provider whose listing fails is left
   * out, and so is every model (and alias) the caller's allow-lists do not admit.
   */
  @Get('models')
  @ApiModelsDocs()
  async models(@Res({ passthrough: true }) reply: FastifyReply) {
    const { models, aliases } = await this.client.admittedModels(disconnectSignal(reply));
    return modelsBody(models, aliases);
  }

  /**
   * One model by any name `model` takes. An alias or a configured model answers without an upstream call; a
   * `provider/model` the configuration does not name is looked up in that provider's listing. A model the
   * caller's allow-lists do not admit is 404, as if it did not exist.
   */
  @Get('models/*')
  @ApiModelDocs()
  async model(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    // Read from the request, not @Param('*'), so the OpenAPI document has only the {path} parameter.
    const id = (request.params as Record<string, string>)['*'];
    if (this.client.modelAliases().some(({ alias }) => alias === id)) {
      if (!this.client.admitsAlias(id)) throw notAdmitted(id);
      return modelObject(id, 'tollgate');
    }
    const { target } = this.client.routeModel({ model: id });
    const model = target.model as string;
    if (!this.client.admitsModel(target.provider, model)) throw notAdmitted(id);
    if (this.client.servesModel(target.provider, model)) return modelObject(id, target.provider);
    const listing = await this.client.listModels(target.provider, disconnectSignal(reply));
    const found = listing.models.find((entry) => entry.id === model);
    if (!found) throw new ModelNotFoundError(`model '${id}' does not exist: ${target.provider} does not list '${model}'`);
    return modelObject(id, found.ownedBy ?? found.provider);
  }
}

/** The input tokens the ledger records for an embeddings call: the upstream's count, else the estimate from the text. */
function promptTokens(usage: TokenUsage | undefined, inputs: readonly string[]): number {
  return usage?.inputTokens ?? estimateTokens(inputs.reduce((chars, text) => chars + text.length, 0));
}

/** A model the caller may not use reads like one that does not exist (OpenAI answers 404 for both). */
function notAdmitted(id: string): ModelNotFoundError {
  return new ModelNotFoundError(`model '${id}' does not exist or is not allowed for this caller`);
}
