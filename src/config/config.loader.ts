import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { toAiSettings } from './ai-config.mapper';
import { toMcpSettings } from './agent-config.mapper';
import { toAuthSettings } from './auth-config.mapper';
import { CONFIG_FILE_VARIABLE, DEFAULT_CONFIG_FILE, DEFAULT_SERVER_CONFIG } from './config.defaults';
import { ConfigError, formatKeyPath } from './config.error';
import type { ConfigDocument, ConfigOverride, EnvironmentProvider, ServerConfig, ServerSection, TollgateConfig } from './config.types';
import { environmentOverrides } from './config-environment';
import { resolveReferences } from './config-references';
import { toLedgerSettings } from './ledger-config.mapper';
import { toLimitsSettings } from './limits-config.mapper';
import { toGovernanceSettings } from './governance-config.mapper';
import { toBudgetsSettings } from './budgets-config.mapper';
import { providerEnvironment } from './provider-environment';
import { toVectorSettings } from './search-config.mapper';
import { toolEnvironmentOverrides } from './tool-environment';
import { formatProblem, validateDocument } from './config-schema.validator';

export interface LoadConfigOptions {
  /** From `--config PATH`; beats TOLLGATE_CONFIG and the default file. */
  configPath?: string;
  /** Values given as command-line flags (highest precedence). */
  overrides?: ConfigOverride[];
  env?: NodeJS.ProcessEnv;
  /** Directory relative paths are resolved against (default: process.cwd()). */
  cwd?: string;
  /** A document built in code instead of a file (the demo's), checked like one; `label` names it in messages. */
  document?: { label: string; value: Record<string, unknown> };
}

/**
 * The one way configuration is read. Precedence, highest first: command-line flags, environment
 * variables, the YAML file, built-in defaults. Throws ConfigError naming the source and the key.
 */
export function loadConfig(options: LoadConfigOptions = {}): TollgateConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = options.document?.label ?? chooseFile(options.configPath, env, cwd);

  const fromFile: Record<string, unknown> = options.document
    ? checkedDocument(options.document.label, options.document.value, env)
    : file
      ? readDocument(file, resolve(cwd, file), env)
      : { version: 1 };
  const document = structuredClone(fromFile);
  applyOverrides(document, environmentOverrides(env));
  const providers = providerEnvironment(env, fromFile, options.overrides);
  applyOverrides(document, providers.overrides);
  applyOverrides(document, toolEnvironmentOverrides(env, fromFile));
  applyOverrides(document, options.overrides ?? []);

  // Cross-key rules (e.g. rbac_enabled needs its stores) can only be checked once every layer is in.
  const merged = validateDocument(document);
  if (merged.length) throw new ConfigError(merged.map((problem) => `${file ?? 'configuration'}: ${formatProblem(problem)}`));
  const filePath = file !== undefined && !options.document ? resolve(cwd, file) : undefined;
  return toConfig(document as unknown as ConfigDocument, file, filePath, cwd, providers.created);
}

/** `--config`, else TOLLGATE_CONFIG, else config/tollgate.yaml when it exists, else none (defaults only). */
function chooseFile(configPath: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const named = configPath ?? (env[CONFIG_FILE_VARIABLE] || undefined);
  if (named !== undefined) {
    if (!existsSync(resolve(cwd, named))) {
      const from = configPath !== undefined ? '--config' : CONFIG_FILE_VARIABLE;
      throw new ConfigError([`${named}: file not found (named by ${from})`]);
    }
    return named;
  }
  return existsSync(resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined;
}

function readDocument(label: string, path: string, env: NodeJS.ProcessEnv): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`${label}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  const parsed = parseDocument(text);
  if (parsed.errors.length) {
    throw new ConfigError(
      parsed.errors.map((error) => {
        const at = error.linePos?.[0];
        return `${label}${at ? `:${at.line}:${at.col}` : ''}: ${firstLine(error.message)}`;
      }),
    );
  }
  const raw: unknown = parsed.toJS({ maxAliasCount: 100 }) ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw) || raw === null) {
    throw new ConfigError([`${label}: must be a YAML mapping with version: 1 at the top`]);
  }
  return checkedDocument(label, raw as Record<string, unknown>, env);
}

/** References resolved, then the schema; what a file holds once parsed, or a document built in code. */
function checkedDocument(label: string, raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const { value, problems } = resolveReferences(raw, env);
  if (problems.length) throw new ConfigError(problems.map((problem) => `${label}: ${problem}`));
  const schemaProblems = validateDocument(value);
  if (schemaProblems.length) throw new ConfigError(schemaProblems.map((problem) => `${label}: ${formatProblem(problem)}`));
  return value as Record<string, unknown>;
}

/** Validates each override on its own (so the message names the variable or flag), then sets it. */
function applyOverrides(document: Record<string, unknown>, overrides: ConfigOverride[]): void {
  const problems: string[] = [];
  for (const override of overrides) {
    const single: Record<string, unknown> = { version: 1 };
    setPath(single, override.path, override.value);
    for (const problem of validateDocument(single)) {
      problems.push(`${override.source}: ${formatKeyPath(problem.path)}: ${problem.message}`);
    }
    if (!problems.length) setPath(document, override.path, getPath(single, override.path));
  }
  if (problems.length) throw new ConfigError(problems);
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

function getPath(source: Record<string, unknown>, path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], source);
}

function toConfig(
  document: ConfigDocument,
  file: string | undefined,
  filePath: string | undefined,
  cwd: string,
  environmentProviders: EnvironmentProvider[],
): TollgateConfig {
  const server = document.server ?? {};
  const context = { source: file ?? 'configuration', filePath, cwd };
  return {
    file,
    server: {
      port: server.port ?? DEFAULT_SERVER_CONFIG.port,
      host: server.host ?? DEFAULT_SERVER_CONFIG.host,
      bodyLimit: server.body_limit ?? DEFAULT_SERVER_CONFIG.bodyLimit,
      chatBodyLimit: server.chat_body_limit ?? DEFAULT_SERVER_CONFIG.chatBodyLimit,
      jsonValueLimit: server.json_value_limit ?? DEFAULT_SERVER_CONFIG.jsonValueLimit,
      basePath: server.base_path ?? DEFAULT_SERVER_CONFIG.basePath,
      ...shutdownTimes(server, context.source),
    },
    auth: document.auth ? toAuthSettings(document.auth) : undefined,
    ai: toAiSettings(document, context),
    vector: toVectorSettings(document, context),
    mcp: toMcpSettings(document, context.source),
    limits: toLimitsSettings(document, context.source),
    ledger: toLedgerSettings(document, context.source),
    governance: toGovernanceSettings(document, context.source),
    budgets: toBudgetsSettings(document, context.source),
    environmentProviders,
    document,
  };
}

/** The drain deadline counts from the signal, so the grace before the drain must fit inside it. */
function shutdownTimes(server: ServerSection, source: string): Pick<ServerConfig, 'shutdownTimeoutMs' | 'shutdownGraceMs'> {
  const shutdownTimeoutMs = server.shutdown_timeout === undefined ? DEFAULT_SERVER_CONFIG.shutdownTimeoutMs : Math.round(server.shutdown_timeout * 1000);
  const shutdownGraceMs = server.shutdown_grace === undefined ? DEFAULT_SERVER_CONFIG.shutdownGraceMs : Math.round(server.shutdown_grace * 1000);
  if (shutdownGraceMs > shutdownTimeoutMs) {
    throw new ConfigError([
      `${source}: server.shutdown_grace: must be at most server.shutdown_timeout (${shutdownTimeoutMs / 1000} s), since the drain deadline counts from the signal`,
    ]);
  }
  return { shutdownTimeoutMs, shutdownGraceMs };
}

/** The yaml package appends ` at line L, column C:` and a code excerpt; the position is already in the prefix. */
function firstLine(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

