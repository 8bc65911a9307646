import { Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AI_MODULE_OPTIONS } from '../ai.constants';
import type { AiModuleOptions } from '../ai-module-options.interface';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { apiBody, disconnectSignal } from '../http/api-response';
import { createApiValidationPipe } from '../http/api-validation.pipe';
import { agentContextFor } from './agent-request-context';
import { AgentDto } from './agent.dto';
import { AgentService } from './agent.service';

/**
 * POST /v1/agent: 200 with `{response, provider, model, loops_run, success, actions}` (success false when
 * the loop limit stopped the run); a broken action protocol is 502 agent_protocol_error, an unknown tool
 * 400 tool_not_configured.
 */
@Controller('v1/agent')
@UseGuards(ApiAuthGuard)
@UseFilters(ApiExceptionFilter)
@UsePipes(createApiValidationPipe())
export class V1AgentController {
  constructor(
    @Inject(AgentService) private readonly agent: AgentService,
    @Inject(AI_MODULE_OPTIONS) private readonly options: AiModuleOptions,
  ) {}

  @Post()
  @HttpCode(200)
  async run(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: AgentDto) {
    const result = await this.agent.run(body.prompt, {
      tools: body.tools,
      provider: body.provider,
      model: body.model,
      maxLoops: body.max_loops,
      context: agentContextFor(request, this.options.agent?.contextHook),
      signal: disconnectSignal(reply),
    });
    return apiBody(request, { ...result });
  }
}
