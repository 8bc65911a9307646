import { requireAuthModuleOptions, toAuthSettings } from './auth-config.mapper';
import { ConfigError } from './config.error';
import type { TollgateConfig } from './config.types';

const base: Omit<TollgateConfig, 'auth' | 'ai' | 'vector' | 'mcp' | 'limits' | 'ledger' | 'governance' | 'budgets'> = {
  file: 'config/tollgate.yaml',
  server: { port: 3000, host: '127.0.0.1', bodyLimit: 1048576, chatBodyLimit: 20971520, jsonValueLimit: 250_000, basePath: '', shutdownTimeoutMs: 25_000, shutdownGraceMs: 0 },
  environmentProviders: [],
  document: { version: 1 },
};

describe('auth config mapping', () => {
  it('passes only the keys the user set, so AuthModule defaults stay in one place', () => {
    expect(toAuthSettings({ jwt_secret: 's', validate_subdomain: true })).toEqual({ jwtSecret: 's', validateSubdomain: true });
    expect(toAuthSettings({ payload_mapping: { user_id: 'sub' } })).toEqual({ payloadMapping: { userId: 'sub' } });
  });

  it('requireAuthModuleOptions insists on a verification key and says where to put it', () => {
    const run = () => requireAuthModuleOptions({ ...base, auth: { validateSubdomain: true } });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(
      'config/tollgate.yaml: auth.jwt_secret: is required (set auth.jwt_secret, auth.jwt_secret_env or the JWT_SECRET environment variable)',
    );
  });

  it('uses jwt_public_key as the key when it is the only one given (RS/PS/ES)', () => {
    const pem = '-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n';
    const options = requireAuthModuleOptions({ ...base, auth: { jwtAlgorithm: 'RS256', jwtPublicKey: pem } });
    expect(options.jwtSecret).toBe(pem);
    expect(options.jwtAlgorithm).toBe('RS256');
  });

  it('refuses when there is no auth section at all', () => {
    expect(() => requireAuthModuleOptions({ ...base })).toThrow('auth: is not configured');
  });
});
