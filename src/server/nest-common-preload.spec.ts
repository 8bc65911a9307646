import type { ConsoleLogger } from '@nestjs/common';

/** The options of @nestjs/common's console-logger.service.js formatter, to compare its output with. */
const NEST_TIMESTAMP: Intl.DateTimeFormatOptions = { year: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', day: '2-digit', month: '2-digit' };

describe('nest-common-preload', () => {
  const native = Intl.DateTimeFormat;
  afterEach(() => {
    Intl.DateTimeFormat = native;
    jest.restoreAllMocks();
  });

  it('loads @nestjs/common without building a date formatter, builds it on the first timestamp, and restores Intl.DateTimeFormat', () => {
    let built = 0;
    const counting = new Proxy(native, {
      construct(target, args: [string?, Intl.DateTimeFormatOptions?]) {
        built++;
        return new target(...args);
      },
    });
    Intl.DateTimeFormat = counting;
    let logger: ConsoleLogger | undefined;
    jest.isolateModules(() => {
      require('./nest-common-preload');
      expect(Intl.DateTimeFormat).toBe(counting);
      expect(built).toBe(0);
      logger = new (require('@nestjs/common') as typeof import('@nestjs/common')).ConsoleLogger();
    });
    const now = Date.UTC(2026, 10, 28, 7, 5, 9);
    jest.spyOn(Date, 'now').mockReturnValue(now);
    const timestamp = (logger as unknown as { getTimestamp(): string }).getTimestamp();
    expect(built).toBe(1);
    expect(timestamp).toBe(new native(undefined, NEST_TIMESTAMP).format(now));
  });
});
