// BATON_METRICS_TOKEN or BATON_METRICS_TOKEN_FILE: the bearer token Prometheus sends to GET /metrics. Unset: open.
import { readSecretFile } from './secret-file.js';

/** Thrown for a bad metrics token setting; the message starts with the variable's name and never holds the token. */
export class MetricsConfigError extends Error {}

/** Visible ASCII, no spaces (it goes into an Authorization header as written), long enough not to be guessed. */
const TOKEN = /^[\x21-\x7e]{16,1024}$/;
const TOKEN_RULE = 'must be 16 to 1024 visible ASCII characters without spaces';

function fail(variable: string, message: string): never {
  throw new MetricsConfigError(`${variable}: ${message}`);
}

function readTokenFile(file: string): string {
  const read = readSecretFile(file);
  return 'text' in read ? read.text : fail('BATON_METRICS_TOKEN_FILE', read.error);
}

/** The token, or undefined when neither variable is set (empty counts as unset). */
export function loadMetricsToken(env: Record<string, string | undefined>): string | undefined {
  const inline = env.BATON_METRICS_TOKEN || undefined;
  const file = env.BATON_METRICS_TOKEN_FILE || undefined;
  if (inline && file) fail('BATON_METRICS_TOKEN_FILE', 'give either BATON_METRICS_TOKEN or this, not both');
  if (inline) return TOKEN.test(inline) ? inline : fail('BATON_METRICS_TOKEN', TOKEN_RULE);
  if (!file) return undefined;
  const token = readTokenFile(file);
  return TOKEN.test(token) ? token : fail('BATON_METRICS_TOKEN_FILE', `${file}: the token ${TOKEN_RULE}`);
}
