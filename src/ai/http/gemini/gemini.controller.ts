import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AiClient, type GenerateOptions } from '../../client/ai-client';
import { requestInputTokens } from '../../client/model-call';
import { ModelNotFoundError } from '../../errors';
import { ApiAuthGuard } from '../../../http/api-auth.guard';
import { ModelNotAllowedError } from '../../../governance/governance-errors';
import { disconnectSignal } from '../api-response';
import { answerParts, generateContentBody, geminiFinishReason, modelResource, modelsListBody, responseId } from './gemini-answers';
import { ApiGeminiCallDocs, ApiGeminiModelDocs, ApiGeminiModelsDocs } from './gemini-docs';
import { GeminiExceptionFilter } from './gemini-exception.filter';
import { parseCountTokensRequest, parseGenerateContentRequest, type GenerateContentRequest, GeminiRequestError } from './gemini-requests';
import { writeGeminiStream } from './gemini-stream';
import { domainMessages, generationOptions } from './gemini-to-domain';

const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'] as const;
type Method = (typeof METHODS)[number];

/**
 * Gemini's API under `/gemini/v1beta`, so `@google/genai` and Gemini CLI take `<tollgate>/gemini` as their
 * base URL. The model in the path goes through the one model routing (an alias, `provider/model`, a configured
 * model) to any provider, through AiClient and so under governance; bodies and errors are Google's shapes.
 */
@Controller('gemini/v1beta')
@UseGuards(ApiAuthGuard)
@UseFilters(GeminiExceptionFilter)
export class GeminiController {
  constructor(@Inject(AiClient) private readonly client: AiClient) {}

  /**
   * `models/{model}:{method}`; the model may hold slashes (`openai/gpt-4o`, which `@google/genai` sends as is)
   * and colons (`ollama/llama3.2:3b`): the method follows the last colon. Answers through `reply` itself: a
   * stream takes over the raw response.
   */
  @Post('models/*')
  @HttpCode(200)
  @ApiGeminiCallDocs()
  async call(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: unknown): Promise<void> {
    const { model, method } = modelAndMethod((request.params as Record<string, string>)['*']);
    if (method === 'countTokens') {
      reply.send(this.countTokens(model, body));
      return;
    }
    const generate = parseGenerateContentRequest(body);
    const options: GenerateOptions = { model, ...generationOptions(generate), signal: disconnectSignal(reply) };
    const messages = domainMessages(generate);
    if (method === 'streamGenerateContent' && (request.query as Record<string, unknown>).alt === 'sse') {
      const { target } = this.client.routeModel(options);
      return writeGeminiStream(request, reply, this.client.streamMessages(messages, options), target.model === undefined ? model : `${target.provider}/${target.model}`);
    }
    const result = await this.client.generateMessages(messages, options);
    const answer = generateContentBody({
      parts: answerParts(result.response, result.toolCalls),
      finishReason: geminiFinishReason(result.finishReason),
      usage: result.usage,
      modelVersion: `${result.provider}/${result.model}`,
      responseId: responseId(),
    });
    // Without alt=sse Gemini answers a stream as one JSON array of its chunks; here the array holds one, the whole answer.
    reply.send(method === 'streamGenerateContent' ? [answer] : answer);
  }

  /** Provider models as `models/provider/model`, then the aliases, all the caller's allow-lists admit, in one page. */
  @Get('models')
  @ApiGeminiModelsDocs()
  async models(@Res({ passthrough: true }) reply: FastifyReply) {
    const { models, aliases } = await this.client.admittedModels(disconnectSignal(reply));
    return modelsListBody(models, aliases);
  }

  /** One model by any name the path takes; one the caller may not use reads as one that does not exist. */
  @Get('models/*')
  @ApiGeminiModelDocs()
  async model(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const id = (request.params as Record<string, string>)['*'];
    if (this.client.modelAliases().some(({ alias }) => alias === id)) {
      if (!this.client.admitsAlias(id)) throw notFound(id);
      return modelResource(id, 'tollgate');
    }
    const { target } = this.client.routeModel({ model: id });
    const model = target.model as string;
    if (!this.client.admitsModel(target.provider, model)) throw notFound(id);
    if (this.client.servesModel(target.provider, model)) return modelResource(id, target.provider);
    const listing = await this.client.listModels(target.provider, disconnectSignal(reply));
    const found = listing.models.find((entry) => entry.id === model);
    if (!found) throw new ModelNotFoundError(`models/${id} is not found: ${target.provider} does not list '${model}'`);
    return modelResource(id, found.ownedBy ?? found.provider);
  }

  /**
   * Tollgate's own estimate (the one budgets reserve with: characters / 4, a fixed count per message and image),
   * for every provider: AiClient has no token counting call. The model must route and be allowed to the caller.
   */
  private countTokens(model: string, body: unknown): { totalTokens: number } {
    const count = parseCountTokensRequest(body);
    const generate: GenerateContentRequest = count.generateContentRequest ?? { contents: count.contents! };
    const { target } = this.client.routeModel({ model });
    const admitted = this.client.modelAliases().some(({ alias }) => alias === model) ? this.client.admitsAlias(model) : this.client.admitsModel(target.provider, target.model as string);
    if (!admitted) throw new ModelNotAllowedError(model);
    const options = generationOptions(generate);
    return { totalTokens: requestInputTokens(domainMessages(generate), options) };
  }
}

function modelAndMethod(path: string): { model: string; method: Method } {
  const colon = path.lastIndexOf(':');
  const method = path.slice(colon + 1);
  if (colon <= 0 || !(METHODS as readonly string[]).includes(method)) {
    throw new GeminiRequestError(`'models/${path}' names no method this gateway serves: use models/{model}:${METHODS.join(', :')}.`, 'model');
  }
  return { model: path.slice(0, colon), method: method as Method };
}

function notFound(id: string): ModelNotFoundError {
  return new ModelNotFoundError(`models/${id} is not found or is not allowed for this caller`);
}
