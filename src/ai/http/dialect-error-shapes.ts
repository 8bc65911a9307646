import type { ErrorShape } from '../../http/error-shapes';
import { MCP_ERROR_SHAPE } from '../mcp/mcp-json-rpc-error';
import { ANTHROPIC_ERROR_SHAPE } from './anthropic/anthropic-errors';
import { GEMINI_ERROR_SHAPE } from './gemini/gemini-errors';
import { OPENAI_ERROR_SHAPE } from './openai/openai-errors';

/**
 * The AiModule's surfaces whose errors are not the /v1 envelope, for the app-wide exception filter
 * (`new ApiExceptionFilter(DIALECT_ERROR_SHAPES)`): errors raised before a route's own filter runs (an unknown
 * path, a body too large or not JSON, the credential check) answer in the surface's shape too. MCP's endpoint
 * is matched by its route, before the path prefixes.
 */
export const DIALECT_ERROR_SHAPES: readonly ErrorShape[] = Object.freeze([MCP_ERROR_SHAPE, OPENAI_ERROR_SHAPE, ANTHROPIC_ERROR_SHAPE, GEMINI_ERROR_SHAPE]);
