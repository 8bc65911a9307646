import { resolveReferences } from './config-references';

describe('resolveReferences', () => {
  it('sets <key> from <key>_env and drops the reference key', () => {
    const { value, problems } = resolveReferences({ auth: { jwt_secret_env: 'S' } }, { S: 'abc' });
    expect(problems).toEqual([]);
    expect(value).toEqual({ auth: { jwt_secret: 'abc' } });
  });

  it('leaves <key> unset when the named variable is unset or empty, so the default applies', () => {
    expect(resolveReferences({ a_env: 'S', b_env: 'E' }, { E: '' }).value).toEqual({});
  });

  it('refuses a key given both directly and through _env', () => {
    const { problems } = resolveReferences({ auth: { jwt_secret: 'x', jwt_secret_env: 'S' } }, { S: 'y' });
    expect(problems).toEqual(['auth.jwt_secret_env: set either jwt_secret or jwt_secret_env, not both']);
  });

  it('refuses an _env value that is not a variable name', () => {
    expect(resolveReferences({ x_env: 'not a name' }, {}).problems).toEqual([
      'x_env: must name an environment variable (letters, digits, underscore)',
    ]);
    expect(resolveReferences({ x_env: 3 }, {}).problems).toHaveLength(1);
  });

  it('substitutes ${VAR} and ${VAR:-fallback} anywhere inside strings, also in lists', () => {
    const env = { HOST: 'db', PORT: '5432' };
    const { value, problems } = resolveReferences(
      { url: 'postgres://${HOST}:${PORT}/${DB:-test}', list: ['${HOST}', 'plain'] },
      env,
    );
    expect(problems).toEqual([]);
    expect(value).toEqual({ url: 'postgres://db:5432/test', list: ['db', 'plain'] });
  });

  it('keeps $${ as a literal ${', () => {
    expect(resolveReferences({ text: 'cost $${HOST}' }, { HOST: 'x' }).value).toEqual({ text: 'cost ${HOST}' });
  });

  it('reports an unset variable by key path and name, never inventing a value', () => {
    const { problems } = resolveReferences({ servers: ['${MEMCACHED}'] }, {});
    expect(problems).toEqual(['servers[0]: environment variable MEMCACHED is not set (use ${MEMCACHED:-fallback} for a default)']);
  });

  it('reports a malformed reference', () => {
    expect(resolveReferences({ a: '${1BAD}' }, {}).problems).toEqual(['a: ${1BAD} is not a valid environment variable reference']);
  });

  it('leaves non-string scalars alone', () => {
    expect(resolveReferences({ n: 1, b: true, z: null }, {}).value).toEqual({ n: 1, b: true, z: null });
  });
});
