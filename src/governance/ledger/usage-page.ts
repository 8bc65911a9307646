/**
 * The usage page (docs/governance.md#the-usage-page): spend and tokens per day and tokens per model, drawn as
 * SVG bars from GET /v1/usage with the token the reader types in. A static page and one script, served as
 * plain Fastify routes under `base_path` like /docs, so no guard stands before the page itself; the data
 * answers to the same credentials and tenant scoping as /v1/usage.
 */
import type { INestApplication } from '@nestjs/common';

export const USAGE_PAGE_PATH = '/usage';

interface PageRouteHost {
  get(path: string, handler: (request: unknown, reply: { type(value: string): unknown; header(name: string, value: string): unknown; send(payload?: unknown): unknown }) => unknown): unknown;
}

/** Only the page's own script runs: no inline script, no other origin. */
const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'";

export function installUsagePage(app: INestApplication, basePath: string): void {
  const page = `${basePath}${USAGE_PAGE_PATH}`;
  const fastify = app.getHttpAdapter().getInstance() as PageRouteHost;
  fastify.get(page, (_request, reply) => {
    reply.type('text/html; charset=utf-8');
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    return reply.send(USAGE_HTML);
  });
  fastify.get(`${page}/usage.js`, (_request, reply) => {
    reply.type('text/javascript; charset=utf-8');
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    return reply.send(USAGE_SCRIPT);
  });
}

const USAGE_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Tollgate usage</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 2rem; color: #1d2430; }
  form { display: flex; gap: .75rem; flex-wrap: wrap; align-items: end; margin-bottom: 1.5rem; }
  label { display: flex; flex-direction: column; gap: .25rem; font-size: 12px; color: #4a5568; }
  input, select, button { font: inherit; padding: .35rem .5rem; }
  #error { color: #b42318; min-height: 1.2em; }
  section { margin: 1.5rem 0; }
  h2 { font-size: 15px; margin: 0 0 .5rem; }
  .bar { fill: #3b6fd8; } .bar:hover { fill: #1d4ab0; }
  text { font-size: 11px; fill: #4a5568; }
</style>
</head>
<body>
<h1>Tollgate usage</h1>
<form id="query">
  <label>Token (API key, admin token or JWT)<input id="token" type="password" autocomplete="off" required size="40"></label>
  <label>Tenant (admin only, empty: all)<input id="tenant" size="16"></label>
  <label>Days<select id="days"><option>7</option><option selected>30</option><option>90</option></select></label>
  <button type="submit">Show</button>
</form>
<p id="error" role="alert"></p>
<p id="totals"></p>
<section><h2>Spend per day (USD)</h2><svg id="chart-spend-day" width="900" height="220" role="img" aria-label="Spend per day"></svg></section>
<section><h2>Tokens per day</h2><svg id="chart-tokens-day" width="900" height="220" role="img" aria-label="Tokens per day"></svg></section>
<section><h2>Tokens per model</h2><svg id="chart-tokens-model" width="900" height="220" role="img" aria-label="Tokens per model"></svg></section>
<script src="usage/usage.js"></script>
</body>
</html>
`;

/** Plain browser JavaScript (no build step); relative URLs keep it working under any base_path. */
const USAGE_SCRIPT = `'use strict';
const SVG = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);
$('token').value = sessionStorage.getItem('tollgate-usage-token') || '';

function bars(svg, rows, valueOf, format) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const width = Number(svg.getAttribute('width'));
  const height = Number(svg.getAttribute('height'));
  const top = 16, bottom = 40, left = 8;
  if (rows.length === 0) {
    const empty = document.createElementNS(SVG, 'text');
    empty.setAttribute('x', '8'); empty.setAttribute('y', '20'); empty.textContent = 'No calls in this range.';
    svg.appendChild(empty);
    return;
  }
  const max = Math.max(...rows.map(valueOf), 1e-9);
  const step = (width - left) / rows.length;
  rows.forEach((row, index) => {
    const value = valueOf(row);
    const barHeight = ((height - top - bottom) * value) / max;
    const x = left + index * step;
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('class', 'bar');
    rect.setAttribute('x', String(x + step * 0.1));
    rect.setAttribute('y', String(height - bottom - barHeight));
    rect.setAttribute('width', String(step * 0.8));
    rect.setAttribute('height', String(barHeight));
    rect.dataset.group = row.group === null ? '' : String(row.group);
    rect.dataset.value = String(value);
    const title = document.createElementNS(SVG, 'title');
    title.textContent = (row.group === null ? '(none)' : row.group) + ': ' + format(value);
    rect.appendChild(title);
    svg.appendChild(rect);
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', String(x + step / 2));
    label.setAttribute('y', String(height - bottom + 14));
    label.setAttribute('text-anchor', 'middle');
    label.textContent = String(row.group === null ? '(none)' : row.group).slice(0, 24);
    svg.appendChild(label);
  });
}

async function usage(groupBy, token, tenant, days) {
  const from = new Date(Date.now() - days * 86400000).toISOString().slice(0, 10);
  const query = new URLSearchParams({ group_by: groupBy, from });
  if (tenant) query.set('tenant', tenant);
  const response = await fetch('v1/usage?' + query, { headers: { authorization: 'Bearer ' + token } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((body.error && body.error.message) || 'The usage request failed (' + response.status + ').');
  return body;
}

$('query').addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = $('token').value.trim();
  sessionStorage.setItem('tollgate-usage-token', token);
  $('error').textContent = '';
  try {
    const [byDay, byModel] = await Promise.all(['day', 'model'].map((group) => usage(group, token, $('tenant').value.trim(), Number($('days').value))));
    const tokens = (row) => row.input_tokens + row.output_tokens;
    bars($('chart-spend-day'), byDay.rows, (row) => row.cost_usd, (value) => '$' + value.toFixed(6));
    bars($('chart-tokens-day'), byDay.rows, tokens, (value) => value + ' tokens');
    bars($('chart-tokens-model'), byModel.rows, tokens, (value) => value + ' tokens');
    const totals = byDay.totals;
    $('totals').textContent = totals.calls + ' calls, ' + tokens(totals) + ' tokens, $' + totals.cost_usd.toFixed(6) +
      (totals.unpriced_calls ? ' (' + totals.unpriced_calls + ' calls without a price)' : '') + (byDay.tenant ? ' for tenant ' + byDay.tenant : '');
    document.body.dataset.loaded = 'true';
  } catch (error) {
    $('error').textContent = error.message;
  }
});
`;
