import { Body, Controller, Delete, Get, HttpCode, Inject, Logger, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AiClient, type GenerateOptions } from '../../client/ai-client';
import { SearchService } from '../../tools/search.service';
import { ApiAuthGuard } from '../../../http/api-auth.guard';
import { writeSse } from '../../../http/sse-writer';
import { governanceOf } from '../../../governance/governance-identity';
import { disconnectSignal } from '../api-response';
import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import { OpenAiRequestError } from '../openai/openai-requests';
import { qualifiedModel } from '../openai/openai-responses';
import { finishedStatus, outputItems, responseBody, responseHeader, responsesUsage, type StoredResponseBody } from './responses-bodies';
import { domainMessages, inputItems, type ItemReference, type ResponseItem } from './responses-input';
import { echoed, nativeRequest } from './responses-native';
import {
  callNames,
  parseResponsesRequest,
  type ResponsesRequest,
  responsesFormat,
  responsesToolChoice,
  responsesTools,
  type WebSearchToolAt,
  webSearchTool,
} from './responses-requests';
import { RESPONSE_STORE, type ResponseStore, type StoredResponse } from './responses-store';
import { ResponsesStream } from './responses-stream';
import { ApiCreateResponseDocs, ApiDeleteResponseDocs, ApiInputItemsDocs, ApiRetrieveResponseDocs } from './responses-docs';
import { inputItemsPage } from './responses-listing';
import { type ResponsesStreamEvent, WebSearchTurns } from './responses-web-search';

/**
 * OpenAI's Responses API under `/openai/v1/responses` (Codex CLI, the `openai` client's `responses.*`, the
 * `ai` SDK's default OpenAI provider). A request becomes the domain's messages and goes through AiClient, so
 * the one model routing sends it to any provider kind, under governance, exactly as chat completions; the
 * answer, stream and errors are the Responses API's shapes. The caller's body rides beside the domain request:
 * an upstream that speaks the Responses API gets it as written and its answer comes back as it wrote it
 * (docs/decisions.md B19), stored here all the same. A `web_search` tool goes so to OpenAI; for any other model
 * Tollgate runs the searches itself between the model's turns (B23).
 */
@Controller('openai/v1/responses')
@UseGuards(ApiAuthGuard)
@UseFilters(OpenAiExceptionFilter)
export class ResponsesController {
  private readonly logger = new Logger('ResponsesController');

  constructor(
    @Inject(AiClient) private readonly client: AiClient,
    @Inject(RESPONSE_STORE) private readonly store: ResponseStore,
    @Inject(SearchService) private readonly search: SearchService,
  ) {}

  /** Answers through `reply` itself: a stream takes over the raw response. */
  @Post()
  @HttpCode(200)
  @ApiCreateResponseDocs()
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: unknown): Promise<void> {
    const parsed = parseResponsesRequest(body);
    const owner = ownerOf(request);
    const input = await this.resolved(owner, inputItems(parsed.input));
    const previous = parsed.previous_response_id ? await this.previous(owner, parsed.previous_response_id) : [];
    const conversation = [...previous, ...input];
    const messages = domainMessages(parsed.instructions, conversation);
    const options: GenerateOptions = { ...generateOptions(parsed, reply), native: nativeRequest(parsed, previous, input) };
    const names = callNames(parsed.tools);
    const webSearch = webSearchTool(parsed.tools);
    const searching = webSearch ? this.searchTurns(webSearch, options, parsed) : undefined;
    const keep = async (response: StoredResponseBody, output: readonly ResponseItem[]) => {
      if (response.store) await this.keep({ owner, body: response, input, conversation: [...conversation, ...output] });
    };
    if (parsed.stream === true) {
      const { target } = this.client.routeModel(options);
      const requested = target.model === undefined ? parsed.model : qualifiedModel(target.provider, target.model);
      const stream = new ResponsesStream(responseHeader(parsed, requested), names);
      const events = searching ? searching.stream(messages, options) : this.client.streamMessages(messages, options);
      return writeSse(request, reply, storedBeforeDone(events, stream, keep), stream);
    }
    const { result, earlier } = searching ? await searching.generate(messages, options) : { result: await this.client.generateMessages(messages, options), earlier: [] };
    if (result.native) {
      const echo = { model: qualifiedModel(result.provider, result.model), store: parsed.store ?? true, previous_response_id: parsed.previous_response_id ?? null };
      const upstream = echoed(result.native, echo, result.provider);
      await keep(upstream, upstream.output);
      reply.send(upstream);
      return;
    }
    const output = [...earlier, ...outputItems(result.response, result.toolCalls, names)];
    const response = responseBody(responseHeader(parsed, qualifiedModel(result.provider, result.model)), {
      ...finishedStatus(result.finishReason),
      output,
      usage: responsesUsage(result.usage),
    });
    await keep(response, output);
    reply.send(response);
  }

  @Get(':id')
  @ApiRetrieveResponseDocs()
  async retrieve(@Req() request: FastifyRequest, @Param('id') id: string, @Query('stream') stream?: string): Promise<StoredResponseBody> {
    if (stream === 'true') throw new OpenAiRequestError("Unsupported value: 'stream' true; a stored response is retrieved whole here.", 'stream', 'unsupported_value');
    return (await this.stored(ownerOf(request), id)).body;
  }

  @Delete(':id')
  @ApiDeleteResponseDocs()
  async remove(@Req() request: FastifyRequest, @Param('id') id: string) {
    if (!(await this.store.delete(ownerOf(request), id))) throw notFound(id);
    return { id, object: 'response' as const, deleted: true };
  }

  @Get(':id/input_items')
  @ApiInputItemsDocs()
  async listInputItems(@Req() request: FastifyRequest, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return inputItemsPage((await this.stored(ownerOf(request), id)).input, query);
  }

  /**
   * A web search tool, decided by the routed model (docs/decisions.md B23): an OpenAI model takes it as written, and
   * only such a model may take the call (a fallback to another kind would drop it); any other model gets Tollgate's
   * search between its turns, without the caller's body (each turn's conversation is Tollgate's); with no search
   * tool configured that is refused naming the tool.
   */
  private searchTurns(at: WebSearchToolAt, options: GenerateOptions, request: ResponsesRequest): WebSearchTurns | undefined {
    if (this.client.routesNative('openai-responses', options)) {
      options.native = { ...options.native!, nativeOnly: `${at.param}: '${at.type}'` };
      return undefined;
    }
    if (this.search.toolNames().length === 0) {
      throw new OpenAiRequestError(
        `Unsupported tool type '${at.type}' in '${at.param}': model '${request.model}' is not an OpenAI model, and no search tool is configured for the gateway to search with (set SEARXNG_URL, or a tools: section; docs/search-agent-mcp.md).`,
        at.param,
        'unsupported_value',
      );
    }
    delete options.native;
    return new WebSearchTurns(this.client, this.search, request.include?.includes('web_search_call.action.sources') === true);
  }

  /** Items given by reference, replaced by the stored items they name; an unknown id is 404 as OpenAI answers it. */
  private async resolved(owner: string, items: Array<ResponseItem | ItemReference>): Promise<ResponseItem[]> {
    return Promise.all(
      items.map(async (item) => {
        if (item.type !== 'item_reference') return item;
        const found = await this.store.item(owner, item.id);
        if (!found) throw new OpenAiRequestError(`Item with id '${item.id}' not found.`, 'input', 'not_found', 404);
        return found;
      }),
    );
  }

  private async stored(owner: string, id: string): Promise<StoredResponse> {
    const stored = await this.store.get(owner, id);
    if (!stored) throw notFound(id);
    return stored;
  }

  /** The conversation a previous response ended; OpenAI answers an unknown one 400 naming the parameter. */
  private async previous(owner: string, id: string): Promise<ResponseItem[]> {
    const stored = await this.store.get(owner, id);
    if (!stored) {
      throw new OpenAiRequestError(`Previous response with id '${id}' not found.`, 'previous_response_id', 'previous_response_not_found');
    }
    return stored.conversation;
  }

  /** Stored before the answer goes out; a store failure costs the continuation, not the answer. */
  private async keep(stored: StoredResponse): Promise<void> {
    await this.store.save(stored).catch((error: unknown) => {
      this.logger.error(`could not store response ${stored.body.id}: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}

/** The upstream's events, the final Response stored before the `done` that writes it is passed on. */
async function* storedBeforeDone(
  events: AsyncIterable<ResponsesStreamEvent>,
  stream: ResponsesStream,
  keep: (response: StoredResponseBody, output: readonly ResponseItem[]) => Promise<void>,
): AsyncGenerator<ResponsesStreamEvent> {
  for await (const event of events) {
    if (event.type === 'done') {
      const { response, output } = stream.settle(event);
      await keep(response, output);
    }
    yield event;
  }
}

function generateOptions(request: ResponsesRequest, reply: FastifyReply): GenerateOptions {
  return {
    model: request.model,
    maxTokens: request.max_output_tokens ?? undefined,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    tools: responsesTools(request.tools),
    toolChoice: responsesToolChoice(request.tool_choice),
    parallelToolCalls: request.parallel_tool_calls ?? undefined,
    responseFormat: responsesFormat(request.text),
    signal: disconnectSignal(reply),
  };
}

/** Stored responses belong to the caller's tenant; a caller without one shares the tenantless space. */
function ownerOf(request: FastifyRequest): string {
  return governanceOf(request)?.identity.tenant ?? '';
}

function notFound(id: string): OpenAiRequestError {
  return new OpenAiRequestError(`No response found with id '${id}'.`, null, 'not_found', 404);
}
