// The strings a run's log and events must never show: every secret of the bundle, in each form ansible may
// print it. A secret seldom appears as itself: ansible's results are JSON (`pa"ss` shows as `pa\"ss`), a value
// inside a list or dict is templated through Python's repr (`it's` shows as `it\'s`, a newline as `\n`), and
// a multi-line secret is printed line by line (stdout_lines).
import type { RunBundle } from '@baton/contracts';

/** Shorter values would scrub ordinary words out of the log; such a secret is weak anyway. */
const MIN_SECRET_CHARS = 4;
/** Lines of a multi-line secret are masked on their own from this length (a private key's, a certificate's). */
const MIN_SECRET_LINE_CHARS = 8;

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, '0');

/** Inside a JSON string: JavaScript's form, which is also Python's json.dumps with ensure_ascii=False. */
const jsonInner = (s: string) => JSON.stringify(s).slice(1, -1);
/** Python's json.dumps default (ensure_ascii): also every non-ASCII UTF-16 unit as \uXXXX. */
const asciiJsonInner = (s: string) => jsonInner(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${hex(c, 4)}`);

/**
 * Inside Python's repr: backslash, tab, newline and carriage return escaped, other ASCII control characters as
 * \xNN; a `'` escaped when repr quotes with `'` (the string holds a `"` too), else left alone.
 */
// eslint-disable-next-line no-control-regex -- escaping control characters is the point
const PYTHON_REPR_ESCAPED = /[\\\t\n\r\u0000-\u001f\u007f]/g;

function pythonReprInners(s: string): string[] {
  const body = s.replace(
    PYTHON_REPR_ESCAPED,
    (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] ?? `\\x${hex(c, 2)}`,
  );
  return [body, body.replace(/'/g, "\\'")];
}

/** A secret as printed raw, JSON-escaped, through repr, and repr'd then JSON-escaped (a list printed in a result). */
function printedForms(secret: string): string[] {
  const reprs = pythonReprInners(secret);
  return [secret, jsonInner(secret), asciiJsonInner(secret), ...reprs, ...reprs.map(jsonInner)];
}

/** Every secret of the bundle with its printed forms, for masking; each line of a multi-line secret too. */
export function secretsOf(bundle: RunBundle): string[] {
  const values: string[] = [...(bundle.secret_values ?? [])];
  for (const c of bundle.credentials) {
    if (c.type === 'ssh_key') {
      values.push(c.inputs.private_key);
      if (c.inputs.passphrase) values.push(c.inputs.passphrase);
    } else if (c.type === 'env') values.push(...Object.values(c.inputs.variables));
    else values.push(c.inputs.password);
  }
  const auth = bundle.playbook.source === 'project' ? bundle.playbook.git.auth : undefined;
  if (auth?.kind === 'token') values.push(auth.token);
  if (auth?.kind === 'ssh_key') {
    values.push(auth.privateKey);
    if (auth.passphrase) values.push(auth.passphrase);
  }
  const galaxyToken = bundle.playbook.source === 'project' ? bundle.playbook.galaxy?.token : undefined;
  if (galaxyToken) values.push(galaxyToken);
  const secrets = new Set<string>();
  for (const value of values) {
    const whole = value.trim();
    if (whole.length < MIN_SECRET_CHARS) continue;
    const lines = whole.includes('\n')
      ? whole
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter((l) => l.length >= MIN_SECRET_LINE_CHARS)
      : [];
    for (const part of [whole, ...lines]) for (const form of printedForms(part)) secrets.add(form);
  }
  return [...secrets];
}
