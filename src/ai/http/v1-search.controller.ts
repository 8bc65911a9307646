import { Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type SearchAndGenerateOptions, SearchService } from '../tools/search.service';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { ApiGenerationResponses } from './api-docs';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { apiBody, disconnectSignal } from './api-response';
import { createApiValidationPipe } from './api-validation.pipe';
import { writeGenerateStream } from './generate-stream';
import { SearchDto, SearchGenerateDto } from './search-dtos';
import { fallbackSwitch } from './api-dtos';

/**
 * Search (no AI call) and search with generation (the route itself is the opt-in); 200 on success,
 * errors mapped once by ApiExceptionFilter (unknown tool: 400 tool_not_configured).
 */
@Controller('v1/search')
@UseGuards(ApiAuthGuard)
@UseFilters(ApiExceptionFilter)
@UsePipes(createApiValidationPipe())
export class V1SearchController {
  constructor(@Inject(SearchService) private readonly search: SearchService) {}

  @Post()
  @HttpCode(200)
  async find(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: SearchDto) {
    const result = await this.search.search(body.query, {
      tool: body.tool,
      limit: body.limit,
      enableFallback: fallbackSwitch(body),
      signal: disconnectSignal(reply),
    });
    return apiBody(request, { ...result, count: result.results.length });
  }

  /** Answers through `reply` itself: a stream takes over the raw response, which passthrough would answer again. */
  @Post('generate')
  @HttpCode(200)
  @ApiGenerationResponses({ search: true })
  async generate(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: SearchGenerateDto): Promise<void> {
    const options: SearchAndGenerateOptions = {
      tool: body.tool,
      limit: body.limit,
      enableFallback: fallbackSwitch(body),
      provider: body.provider,
      model: body.model,
      maxTokens: body.max_tokens,
      temperature: body.temperature,
      signal: disconnectSignal(reply),
    };
    if (body.stream === true) {
      const { found, events } = await this.search.searchAndStream(body.query, options);
      return writeGenerateStream(request, reply, events, [{ event: 'results', data: { ...found, count: found.results.length } }]);
    }
    const { generation, ...found } = await this.search.searchAndGenerate(body.query, options);
    reply.send(apiBody(request, { ...found, count: found.results.length, ...generation }));
  }
}
