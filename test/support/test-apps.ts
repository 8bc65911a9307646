import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.loader';
import type { TollgateConfig } from '../../src/config/config.types';
import { createHttpApp } from '../../src/server/http-server';

/** An application and the configuration it was created from. */
export interface TestApp {
  app: NestFastifyApplication;
  config: TollgateConfig;
}

/**
 * The real server application (AppModule on Fastify, logs off) from YAML texts, each written to one
 * temporary work directory and loaded from there; close() closes every application built and removes the
 * directory.
 */
export class TestApps {
  /** Relative paths in a configuration (audit logs, other files a spec writes) resolve here. */
  readonly work: string;
  private readonly apps: NestFastifyApplication[] = [];
  private configs = 0;

  /** `env` is what every configuration is loaded with: the spec's provider keys and emulator URLs. */
  constructor(prefix: string, private readonly env: NodeJS.ProcessEnv) {
    this.work = mkdtempSync(join(tmpdir(), prefix));
  }

  /** The application, not started yet: for a spec that hooks into Fastify first. `env` adds to or blanks the spec's. */
  async create(yaml: string, env: NodeJS.ProcessEnv = {}): Promise<TestApp> {
    // Counted apart from the applications: concurrent calls each need their own file before either is created.
    const file = join(this.work, `config-${this.configs++}.yaml`);
    writeFileSync(file, yaml);
    const config = loadConfig({ cwd: this.work, configPath: file, env: { ...this.env, ...env } });
    const app = await createHttpApp(config, false);
    this.apps.push(app);
    return { app, config };
  }

  /** The application, ready for inject(). */
  async build(yaml: string, env: NodeJS.ProcessEnv = {}): Promise<NestFastifyApplication> {
    const { app } = await this.create(yaml, env);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    return app;
  }

  /** The application listening on a free loopback port, for real clients; `origin` is its `http://host:port`. */
  async listen(yaml: string, env: NodeJS.ProcessEnv = {}): Promise<TestApp & { origin: string }> {
    const created = await this.create(yaml, env);
    await created.app.listen(0, '127.0.0.1');
    const { port } = created.app.getHttpServer().address() as AddressInfo;
    return { ...created, origin: `http://127.0.0.1:${port}` };
  }

  /** Closes one application before the others: for a spec that reads what it writes at shutdown. */
  async closeEarly(app: NestFastifyApplication): Promise<void> {
    const index = this.apps.indexOf(app);
    if (index >= 0) this.apps.splice(index, 1);
    await app.close();
  }

  async close(): Promise<void> {
    await Promise.all(this.apps.map((app) => app.close()));
    rmSync(this.work, { recursive: true, force: true });
  }
}
