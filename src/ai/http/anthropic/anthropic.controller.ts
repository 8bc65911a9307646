import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AiClient, type GenerateOptions } from '../../client/ai-client';
import { estimateTokens, messageChars } from '../../client/model-call';
import type { ChatMessage } from '../../providers/ai-provider.interface';
import { ModelNotFoundError } from '../../errors';
import { ModelNotAllowedError } from '../../../governance/governance-errors';
import { ApiAuthGuard } from '../../../http/api-auth.guard';
import { disconnectSignal } from '../api-response';
import { ApiAnthropicModelDocs, ApiAnthropicModelsDocs, ApiCountTokensDocs, ApiMessagesDocs } from './anthropic-docs';
import { AnthropicExceptionFilter } from './anthropic-exception.filter';
import { domainMessages, generationParameters, nativeRequest, parseCountTokensRequest, parseMessagesRequest, toolDefinitions } from './anthropic-requests';
import { messageBody, modelInfoBody, modelsListBody } from './anthropic-responses';
import { writeMessageStream } from './anthropic-stream';

/**
 * Anthropic's Messages API under `/anthropic/v1`, so the Anthropic SDK and Claude Code take
 * `<tollgate>/anthropic` as their base URL. The request is mapped into the domain request and answered by
 * AiClient, so the model routing sends it to any provider kind and governance (allow-lists, budgets, RPM/TPM,
 * the ledger) applies as on /openai/v1; bodies, streams and errors are Anthropic's shapes. A query string
 * (`?beta=true`, which the SDK's beta client adds) is accepted and ignored.
 */
@Controller('anthropic/v1')
@UseGuards(ApiAuthGuard)
@UseFilters(AnthropicExceptionFilter)
export class AnthropicController {
  constructor(@Inject(AiClient) private readonly client: AiClient) {}

  /** Answers through `reply` itself: a stream takes over the raw response, which passthrough would answer again. */
  @Post('messages')
  @HttpCode(200)
  @ApiMessagesDocs()
  async messages(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: unknown): Promise<void> {
    // The Anthropic SDK shows this header as a message's `_request_id` and in its errors.
    reply.header('request-id', String(request.id));
    const parsed = parseMessagesRequest(body);
    // What only Anthropic takes is left out of the domain request and named here: it then goes to Anthropic only.
    const anthropicOnly: string[] = [];
    const messages = domainMessages(parsed, anthropicOnly);
    const options: GenerateOptions = {
      model: parsed.model,
      ...generationParameters(parsed, anthropicOnly),
      native: nativeRequest(parsed, request.headers, anthropicOnly),
      signal: disconnectSignal(reply),
    };
    if (parsed.stream === true) {
      return writeMessageStream(request, reply, this.client.streamMessages(messages, options), parsed.model, estimatedInputTokens(messages, options));
    }
    const result = await this.client.generateMessages(messages, options);
    // An Anthropic upstream's own Message, naming the model as the caller asked, like every answer of the surface.
    if (result.native) reply.send({ ...result.native, model: parsed.model });
    else reply.send(messageBody({ model: parsed.model, text: result.response, finishReason: result.finishReason, usage: result.usage, toolCalls: result.toolCalls }));
  }

  /**
   * The input tokens of a request. A model that routes to Anthropic counts them itself: the caller's body goes to
   * its `count_tokens` with the routed model and the caller's version and betas, and its answer comes back as
   * sent. Any other kind has no such count: the tokens are estimated from the characters, as the gateway's budget
   * check does. The model is routed and checked against the caller's allow-lists either way, so a model the
   * caller may not use is refused here as on `messages`.
   */
  @Post('messages/count_tokens')
  @HttpCode(200)
  @ApiCountTokensDocs()
  async countTokens(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown) {
    const parsed = parseCountTokensRequest(body);
    if (!this.admits(parsed.model)) throw new ModelNotAllowedError(parsed.model);
    const counted = await this.client.countNativeTokens(parsed.model, nativeRequest(parsed, request.headers), disconnectSignal(reply));
    if (counted) return counted;
    return { input_tokens: estimatedInputTokens(domainMessages(parsed), { tools: toolDefinitions(parsed.tools) }) };
  }

  /** Every provider's models as `provider/model`, then the aliases, filtered by the caller's allow-lists as on /openai/v1/models. */
  @Get('models')
  @ApiAnthropicModelsDocs()
  async models(@Res({ passthrough: true }) reply: FastifyReply) {
    const { models, aliases } = await this.client.admittedModels(disconnectSignal(reply));
    return modelsListBody(models, aliases);
  }

  /** One model by any name `model` takes; one the caller may not use is 404, as if it did not exist. */
  @Get('models/*')
  @ApiAnthropicModelDocs()
  model(@Req() request: FastifyRequest) {
    const id = (request.params as Record<string, string>)['*'];
    if (!this.admits(id)) throw notFound(id);
    return modelInfoBody(id);
  }

  /** Whether the caller may use the model `id` names (an alias, `provider/model` or a configured model); unknown ones throw `model_not_found`. */
  private admits(id: string): boolean {
    if (this.client.modelAliases().some(({ alias }) => alias === id)) return this.client.admitsAlias(id);
    const { target } = this.client.routeModel({ model: id });
    return target.model !== undefined && this.client.admitsModel(target.provider, target.model);
  }
}

/** Characters of the messages and tool definitions, in tokens as the gateway estimates them. */
function estimatedInputTokens(messages: readonly ChatMessage[], options: Pick<GenerateOptions, 'tools'>): number {
  return estimateTokens(messageChars(messages) + (options.tools ? JSON.stringify(options.tools).length : 0));
}

function notFound(id: string): ModelNotFoundError {
  return new ModelNotFoundError(`model: ${id} does not exist or is not allowed for this caller`);
}
