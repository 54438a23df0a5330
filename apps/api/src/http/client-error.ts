import crypto from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/** Node's parser errors that are not a plain 400, by `err.code`: [status, problem slug, detail]. */
const PARSE_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'headers-too-large',
    'the request line and headers are too large (a path or query this long is no request Baton serves)',
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [
    413,
    'chunk-extensions-too-large',
    'the chunk extensions of the request body are too large',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request-timeout', 'the request did not arrive in time'],
};

/** The whole HTTP/1.1 response for a request Node's parser refused: problem+json, and the connection closes. */
export function clientErrorResponse(code: string | undefined, requestId: string = crypto.randomUUID()): string {
  const [status, slug, detail] = (code && PARSE_ERRORS[code]) || [
    400,
    'malformed-request',
    'the request is not valid HTTP/1.1',
  ];
  const reason = REASONS[status] ?? 'Bad Request';
  // Like every other answer: an id the operator can quote, in the body and in X-Request-Id.
  const body = JSON.stringify({
    type: `urn:baton:problem:${slug}`,
    title: reason,
    status,
    detail,
    request_id: requestId,
  });
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * A request Node's HTTP parser refuses (a 20,000-character path: headers too large; bytes that are not HTTP) never
 * reaches Express, and Node's own answer is a bare status line. This answers problem+json like every other error.
 * As Node does, it writes only when no response of this connection has begun: a reply in the middle of another
 * would corrupt what the client reads.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    // Closed once the answer is flushed: a client holding its side open must not keep the socket.
    if (err.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent)
      socket.end(clientErrorResponse(err.code), () => socket.destroy());
    else socket.destroy();
  });
}
