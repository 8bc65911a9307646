import { base64ImageDataUrl, isBase64Payload } from './base64-data-url';

describe('base64ImageDataUrl', () => {
  it('reads the media type (lower case) and the payload', () => {
    expect(base64ImageDataUrl('data:Image/PNG;base64,iVBORw0K')).toEqual({ mediaType: 'image/png', data: 'iVBORw0K' });
    expect(base64ImageDataUrl('data:image/jpeg;base64,/9j/4A==')).toEqual({ mediaType: 'image/jpeg', data: '/9j/4A==' });
  });

  it('refuses what is not a base64 image data URL', () => {
    expect(base64ImageDataUrl('https://example.com/a.png')).toBeUndefined();
    expect(base64ImageDataUrl('data:text/plain;base64,aGk=')).toBeUndefined();
    expect(base64ImageDataUrl('data:image/png,raw')).toBeUndefined();
    expect(base64ImageDataUrl('data:image/png;base64,')).toBeUndefined();
    expect(base64ImageDataUrl('data:image/png;base64,ab cd')).toBeUndefined();
    expect(base64ImageDataUrl('data:image/png;base64,ab=cd')).toBeUndefined();
    expect(base64ImageDataUrl('data:image/png;base64,=abc')).toBeUndefined();
  });

  it('bounds the padding when asked', () => {
    expect(base64ImageDataUrl('data:image/png;base64,ab===')).toBeDefined();
    expect(base64ImageDataUrl('data:image/png;base64,ab===', 2)).toBeUndefined();
    expect(isBase64Payload('ab==', 2)).toBe(true);
  });

  it('reads a 40 MiB payload without exhausting the regular-expression stack', () => {
    const payload = 'iVBORw0K'.repeat((40 * 1024 * 1024) / 8);
    expect(base64ImageDataUrl(`data:image/png;base64,${payload}`)?.data.length).toBe(payload.length);
  });
});
