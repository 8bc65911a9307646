/**
 * Gemini's request in the domain's words: `contents` and `systemInstruction` become ChatMessages, the
 * declarations, tool config and generation config become GenerateOptions. One mapping in, whatever provider the
 * model routes to. Gemini matches a functionResponse to its call by id when the client gives one, else by name
 * in order; the domain matches by id, so calls get ids here and responses take them over.
 */
import type { GenerateOptions } from '../../client/ai-client';
import type { ChatMessage, ContentPart, ResponseFormat, ToolCall, ToolChoice, ToolDefinition } from '../../providers/ai-provider.interface';
import { THOUGHT_SIGNATURE_SEPARATOR } from '../../providers/gemini/gemini-wire';
import { type GeminiContentRequest, type GeminiPartRequest, GeminiRequestError, type GenerateContentRequest } from './gemini-requests';

/** The request fields GenerateOptions takes (the model and the abort signal come from the controller). */
export type GeminiGenerationOptions = Omit<GenerateOptions, 'model' | 'signal'>;

export function domainMessages(request: Pick<GenerateContentRequest, 'contents' | 'systemInstruction'>): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.systemInstruction) messages.push({ role: 'system', content: systemText(request.systemInstruction) });
  let pending: PendingCall[] = [];
  for (const [index, content] of request.contents.entries()) {
    const at = `contents[${index}]`;
    if (content.role === 'model') {
      const turn = modelTurn(content, index);
      pending = turn.calls;
      if (turn.message) messages.push(turn.message);
    } else {
      messages.push(...userTurn(content, at, pending));
      pending = [];
    }
  }
  return messages;
}

interface PendingCall {
  id: string;
  clientId?: string;
  name: string;
  answered: boolean;
}

function systemText(content: GeminiContentRequest): string {
  return content.parts
    .map((part, index) => {
      if (part.text === undefined) throw new GeminiRequestError(`'systemInstruction.parts[${index}]' must be a text part.`, `systemInstruction.parts[${index}]`);
      return part.text;
    })
    .join('\n');
}

/**
 * A model turn: its text (thought parts, the model's own reasoning, are left out: no provider takes them back)
 * and its function calls, each with an id; a call's `thoughtSignature` rides in the id as the Gemini adapter
 * reads it (gemini-wire.ts), so a Gemini 3 upstream gets it back.
 */
function modelTurn(content: GeminiContentRequest, turn: number): { message?: ChatMessage; calls: PendingCall[] } {
  const at = `contents[${turn}]`;
  let text = '';
  const toolCalls: ToolCall[] = [];
  const calls: PendingCall[] = [];
  for (const [index, part] of content.parts.entries()) {
    const field = `${at}.parts[${index}]`;
    const kind = partKind(part, field);
    if (kind === 'text') {
      if (part.thought !== true) text += part.text;
    } else if (kind === 'functionCall') {
      const call = part.functionCall!;
      const id = `${call.id ?? `call_${turn}_${index}`}${part.thoughtSignature ? `${THOUGHT_SIGNATURE_SEPARATOR}${part.thoughtSignature}` : ''}`;
      toolCalls.push({ id, name: call.name, arguments: JSON.stringify(call.args ?? {}) });
      calls.push({ id, clientId: call.id, name: call.name, answered: false });
    } else {
      throw new GeminiRequestError(`'${field}.${kind}' is not allowed in a model turn.`, `${field}.${kind}`);
    }
  }
  if (toolCalls.length > 0) return { message: { role: 'assistant', content: text === '' ? null : text, toolCalls }, calls };
  return { message: text === '' ? undefined : { role: 'assistant', content: text }, calls };
}

/** A user turn: its function responses first (the domain wants them right after the calls), then its text and images. */
function userTurn(content: GeminiContentRequest, at: string, pending: PendingCall[]): ChatMessage[] {
  const results: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const [index, part] of content.parts.entries()) {
    const field = `${at}.parts[${index}]`;
    const kind = partKind(part, field);
    if (kind === 'functionResponse') results.push(toolResult(part.functionResponse!, pending, `${field}.functionResponse`));
    else if (kind === 'text') parts.push({ type: 'text', text: part.text! });
    else if (kind === 'inlineData') parts.push(inlineImage(part.inlineData!, `${field}.inlineData`));
    else if (kind === 'fileData') parts.push(fileImage(part.fileData!, `${field}.fileData`));
    else throw new GeminiRequestError(`'${field}.functionCall' is only allowed in a model turn.`, `${field}.functionCall`);
  }
  if (parts.length === 0) return results;
  const user: ChatMessage = { role: 'user', content: parts.every((part) => part.type === 'text') ? parts.map((part) => (part as { text: string }).text).join('') : parts };
  return [...results, user];
}

type PartKind = 'text' | 'inlineData' | 'fileData' | 'functionCall' | 'functionResponse';
const PART_KINDS: readonly PartKind[] = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];

/** A part holds exactly one kind of data, as Google's `Part` oneof says. */
function partKind(part: GeminiPartRequest, field: string): PartKind {
  const kinds = PART_KINDS.filter((kind) => part[kind] !== undefined);
  if (kinds.length !== 1) throw new GeminiRequestError(`'${field}' must hold exactly one of ${PART_KINDS.join(', ')}.`, field);
  return kinds[0];
}

/** `{error: ...}` alone is Gemini's way of saying the function failed. */
function toolResult(response: NonNullable<GeminiPartRequest['functionResponse']>, pending: PendingCall[], field: string): ChatMessage {
  const call =
    pending.find((candidate) => !candidate.answered && response.id !== undefined && candidate.clientId === response.id) ??
    pending.find((candidate) => !candidate.answered && candidate.name === response.name);
  if (!call) throw new GeminiRequestError(`'${field}' answers no functionCall of the model turn before it.`, field);
  call.answered = true;
  const keys = Object.keys(response.response);
  const isError = keys.length === 1 && keys[0] === 'error';
  const content = JSON.stringify(isError ? response.response.error : response.response);
  return { role: 'tool', toolCallId: call.id, content: content ?? 'null', ...(isError ? { isError } : {}) };
}

const IMAGE_TYPE = /^image\/[a-z0-9.+-]+$/i;

function inlineImage(data: { mimeType: string; data: string }, field: string): ContentPart {
  if (!IMAGE_TYPE.test(data.mimeType)) throw new GeminiRequestError(`'${field}.mimeType' ${data.mimeType} is not supported: only images are.`, `${field}.mimeType`);
  return { type: 'image', image: { kind: 'base64', mediaType: data.mimeType.toLowerCase(), data: data.data } };
}

/** An image at an http(s) URL goes as an image URL (each adapter applies the image download rules); Google's File API URIs cannot be read here. */
function fileImage(data: { mimeType?: string; fileUri: string }, field: string): ContentPart {
  if (data.mimeType !== undefined && !IMAGE_TYPE.test(data.mimeType)) {
    throw new GeminiRequestError(`'${field}.mimeType' ${data.mimeType} is not supported: only images are.`, `${field}.mimeType`);
  }
  if (!/^https?:\/\//i.test(data.fileUri) || /^https:\/\/generativelanguage\.googleapis\.com\//i.test(data.fileUri)) {
    throw new GeminiRequestError(`'${field}.fileUri' must be a public http(s) image URL; files uploaded to Google's File API cannot be read through this gateway.`, `${field}.fileUri`);
  }
  return { type: 'image', image: { kind: 'url', url: data.fileUri } };
}

export function generationOptions(request: GenerateContentRequest): GeminiGenerationOptions {
  const config = request.generationConfig ?? {};
  const declared = functionDeclarations(request.tools);
  const calling = functionCalling(request.toolConfig, declared);
  return {
    maxTokens: config.maxOutputTokens,
    temperature: config.temperature,
    topP: config.topP,
    // Gemini CLI sends topK: 64 on every turn: sent to the kinds that have top-k, left out by the others.
    ...(config.topK !== undefined ? { topK: config.topK, topKOptional: true } : {}),
    stop: config.stopSequences,
    seed: config.seed,
    presencePenalty: config.presencePenalty,
    frequencyPenalty: config.frequencyPenalty,
    tools: calling.tools,
    toolChoice: calling.choice,
    responseFormat: responseFormat(config),
  };
}

function functionDeclarations(tools: GenerateContentRequest['tools']): ToolDefinition[] | undefined {
  const declarations = (tools ?? []).flatMap((tool, index) =>
    (tool.functionDeclarations ?? []).map((declaration, at) => {
      const field = `tools[${index}].functionDeclarations[${at}]`;
      if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
        throw new GeminiRequestError(`'${field}': give either 'parameters' or 'parametersJsonSchema', not both.`, `${field}.parametersJsonSchema`);
      }
      const parameters = declaration.parametersJsonSchema ?? (declaration.parameters ? jsonSchemaOf(declaration.parameters) : undefined);
      return { name: declaration.name, ...(declaration.description !== undefined ? { description: declaration.description } : {}), ...(parameters ? { parameters } : {}) };
    }),
  );
  return declarations.length > 0 ? declarations : undefined;
}

/**
 * AUTO, ANY and NONE as the domain's auto, required and none; ANY with `allowedFunctionNames` offers only those
 * functions (one name forces that function).
 */
function functionCalling(config: GenerateContentRequest['toolConfig'], tools: ToolDefinition[] | undefined): { tools?: ToolDefinition[]; choice?: ToolChoice } {
  const calling = config?.functionCallingConfig;
  const mode = calling?.mode === 'MODE_UNSPECIFIED' ? undefined : calling?.mode;
  const allowed = calling?.allowedFunctionNames;
  if (allowed !== undefined && mode !== 'ANY') {
    throw new GeminiRequestError("'toolConfig.functionCallingConfig.allowedFunctionNames' is only allowed with mode ANY.", 'toolConfig.functionCallingConfig.allowedFunctionNames');
  }
  if (mode !== undefined && tools === undefined) {
    throw new GeminiRequestError("'toolConfig.functionCallingConfig' needs 'tools' with functionDeclarations.", 'toolConfig.functionCallingConfig');
  }
  if (mode === 'NONE') return { tools, choice: 'none' };
  if (mode === 'AUTO') return { tools, choice: 'auto' };
  if (mode !== 'ANY') return { tools };
  if (allowed === undefined) return { tools, choice: 'required' };
  const offered = tools!.filter((tool) => allowed.includes(tool.name));
  const unknown = allowed.find((name) => !tools!.some((tool) => tool.name === name));
  if (unknown !== undefined) {
    throw new GeminiRequestError(`'toolConfig.functionCallingConfig.allowedFunctionNames' names '${unknown}', which no functionDeclaration declares.`, 'toolConfig.functionCallingConfig.allowedFunctionNames');
  }
  return { tools: offered, choice: offered.length === 1 ? { name: offered[0].name } : 'required' };
}

/** `application/json` with a schema is the domain's json_schema, without one json_object; text/plain is the default. */
function responseFormat(config: NonNullable<GenerateContentRequest['generationConfig']>): ResponseFormat | undefined {
  if (config.responseSchema !== undefined && config.responseJsonSchema !== undefined) {
    throw new GeminiRequestError("'generationConfig': give either 'responseSchema' or 'responseJsonSchema', not both.", 'generationConfig.responseJsonSchema');
  }
  // Gemini CLI sends `responseJsonSchema` with Schema's capitals (`OBJECT`, `STRING`), which Google accepts; other
  // providers take JSON Schema's lower case only, so both fields are read through the same conversion.
  const given = config.responseJsonSchema ?? config.responseSchema;
  const schema = given === undefined ? undefined : jsonSchemaOf(given);
  if (config.responseMimeType !== 'application/json') {
    if (schema !== undefined) {
      throw new GeminiRequestError("'generationConfig.responseMimeType' must be application/json when a response schema is given.", 'generationConfig.responseMimeType');
    }
    return undefined;
  }
  return schema === undefined ? { type: 'json_object' } : { type: 'json_schema', name: 'response', schema };
}

/**
 * Google's Schema (an OpenAPI 3.0 subset: `type` in capitals, `nullable`, `propertyOrdering`) as JSON Schema,
 * which every provider takes: types in lower case, `nullable` as a `null` type, Google-only keys left out.
 */
export function jsonSchemaOf(schema: Record<string, unknown>): Record<string, unknown> {
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'propertyOrdering' || key === 'nullable') continue;
    if (key === 'type' && typeof value === 'string') converted.type = schema.nullable === true ? [value.toLowerCase(), 'null'] : value.toLowerCase();
    else if ((key === 'items' || key === 'not') && isSchema(value)) converted[key] = jsonSchemaOf(value);
    else if (key === 'properties' && isSchema(value)) converted[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, isSchema(sub) ? jsonSchemaOf(sub) : sub]));
    else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) converted[key] = value.map((sub) => (isSchema(sub) ? jsonSchemaOf(sub) : sub));
    else converted[key] = value;
  }
  return converted;
}

function isSchema(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
