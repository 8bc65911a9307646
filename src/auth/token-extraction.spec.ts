import { cookieValue, extractToken } from './token-extraction';

describe('extractToken', () => {
  it.each(['Bearer abc.def.ghi', 'Bearer   abc.def.ghi \t', 'bearer abc.def.ghi', 'BEARER   abc.def.ghi  ', '  Bearer\tabc.def.ghi'])(
    'reads %j',
    (authorization) => {
      expect(extractToken({ authorization })).toEqual({ token: 'abc.def.ghi' });
    },
  );

  it('answers missing_token without a header, or with an empty one', () => {
    expect(extractToken({})).toMatchObject({ code: 'missing_token' });
    expect(extractToken({ authorization: '  ' })).toMatchObject({ code: 'missing_token' });
  });

  it.each(['Basic dXNlcjpwdw==', 'Bearer', 'Bearer    ', 'Bearerabc', 'Token abc'])('refuses %j as invalid_authorization_header', (authorization) => {
    expect(extractToken({ authorization })).toMatchObject({ code: 'invalid_authorization_header' });
  });

  it('falls back to the configured cookie only when there is no Authorization header', () => {
    const cookie = 'theme=dark; session=abc.def.ghi; other=1';
    expect(extractToken({ cookie }, 'session')).toEqual({ token: 'abc.def.ghi' });
    expect(extractToken({ cookie })).toMatchObject({ code: 'missing_token' });
    expect(extractToken({ cookie, authorization: 'Bearer x.y.z' }, 'session')).toEqual({ token: 'x.y.z' });
    expect(extractToken({ cookie, authorization: 'Basic x' }, 'session')).toMatchObject({ code: 'invalid_authorization_header' });
  });
});

describe('cookieValue', () => {
  it('finds a cookie by exact name, unquotes it and ignores empty values', () => {
    expect(cookieValue('a=1; session="t.o.k"', 'session')).toBe('t.o.k');
    expect(cookieValue('xsession=1; session=2', 'session')).toBe('2');
    expect(cookieValue('session=', 'session')).toBeUndefined();
    expect(cookieValue(['a=1', 'session=3'], 'session')).toBe('3');
    expect(cookieValue(undefined, 'session')).toBeUndefined();
  });
});
