/**
 * Loads @nestjs/common with its logger's date formatters built on first use; imported first by the server's
 * and the CLI's entries, before anything else loads Nest.
 *
 * @nestjs/common builds two `Intl.DateTimeFormat` when it loads, for the timestamps of its console logger.
 * Building one reads ICU's locale, calendar and time-zone data: ~9 MiB of RSS in every process (issue 29
 * part 5), for timestamps that Tollgate's server never prints (its logs are pino's). Nest only calls
 * `format()` on them, so while @nestjs/common loads, `Intl.DateTimeFormat` is a function that returns an
 * object building the real formatter when `format()` is first called; the global is restored as soon as the
 * module has loaded, and a Nest that builds its formatters elsewhere simply pays the cost again.
 */
const NativeDateTimeFormat = Intl.DateTimeFormat;

function formatterBuiltOnFirstUse(locales?: string | string[], options?: Intl.DateTimeFormatOptions): Pick<Intl.DateTimeFormat, 'format'> {
  let formatter: Intl.DateTimeFormat | undefined;
  return { format: (date) => (formatter ??= new NativeDateTimeFormat(locales, options)).format(date) };
}

Intl.DateTimeFormat = formatterBuiltOnFirstUse as unknown as typeof Intl.DateTimeFormat;
try {
  require('@nestjs/common');
} finally {
  Intl.DateTimeFormat = NativeDateTimeFormat;
}
