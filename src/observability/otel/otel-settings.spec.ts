import { problemsOf } from '../../../test/support/config-problems';
import { loadConfig } from '../../config/config.loader';
import type { ConfigDocument } from '../../config/config.types';
import { toOtelSettings } from './otel-settings';

const document = (otel?: NonNullable<ConfigDocument['observability']>['otel']): ConfigDocument => ({ version: 1, ...(otel ? { observability: { otel } } : {}) }) as ConfigDocument;

describe('toOtelSettings', () => {
  it('is off without the section and without an OTLP endpoint in the environment', () => {
    expect(toOtelSettings(document(), {})).toMatchObject({ enabled: false, captureContent: false, serviceName: 'tollgate', metrics: true, metricsIntervalMs: 60_000 });
  });

  it('turns on for an endpoint in the file or in OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT', () => {
    expect(toOtelSettings(document({ endpoint: 'http://collector:4318/' }), {})).toMatchObject({ enabled: true, endpoint: 'http://collector:4318' });
    expect(toOtelSettings(document(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled).toBe(true);
    expect(toOtelSettings(document(), { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).enabled).toBe(true);
    expect(toOtelSettings(document(), { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }).enabled).toBe(false);
  });

  it('enabled: false wins over an endpoint; OTEL_SDK_DISABLED=true wins over everything', () => {
    expect(toOtelSettings(document({ enabled: false, endpoint: 'http://collector:4318' }), {}).enabled).toBe(false);
    expect(toOtelSettings(document({ enabled: true }), { OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(false);
    expect(toOtelSettings(document({ enabled: true }), {}).enabled).toBe(true);
  });

  it('leaves what the file does not set to the exporters and the SDK (OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER)', () => {
    const settings = toOtelSettings(document({ enabled: true }), { OTEL_EXPORTER_OTLP_HEADERS: 'x-key=1', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    expect(settings).not.toHaveProperty('endpoint');
    expect(settings).not.toHaveProperty('headers');
    expect(settings).not.toHaveProperty('samplingRatio');
  });

  it("takes the file's headers, ratio, service name and content capture; the content switch also from its OTEL_ variable", () => {
    expect(
      toOtelSettings(document({ enabled: true, headers: { 'x-key': 'k' }, sampling_ratio: 0.25, service_name: 'edge', capture_content: true, metrics: false, metrics_interval: 5 }), {}),
    ).toEqual({ enabled: true, headers: { 'x-key': 'k' }, samplingRatio: 0.25, serviceName: 'edge', captureContent: true, metrics: false, metricsIntervalMs: 5000 });
    expect(toOtelSettings(document({ enabled: true }), { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', OTEL_SERVICE_NAME: 'gw' })).toMatchObject({ captureContent: true, serviceName: 'gw' });
    expect(toOtelSettings(document({ enabled: true, capture_content: false }), { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }).captureContent).toBe(false);
  });
});

describe('observability.otel in the configuration schema', () => {
  it('names each wrong key and what it must be', () => {
    const otel = { endpoint: 'ftp://collector', sampling_ratio: 2, headers: { 'bad header': 'x' }, capture_contents: true };
    const problems = problemsOf(() => loadConfig({ cwd: '/', env: {}, document: { label: 'otel.yaml', value: { version: 1, observability: { otel } } } }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('observability.otel.endpoint: must be an http:// or https:// URL'),
        expect.stringContaining('observability.otel.sampling_ratio: must be <= 1'),
        expect.stringContaining('observability.otel.headers: header name "bad header" is not a valid HTTP header name'),
        expect.stringContaining('observability.otel.capture_contents: unknown key (did you mean capture_content?)'),
      ]),
    );
  });
});
