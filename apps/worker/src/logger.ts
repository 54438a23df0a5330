// Structured JSON lines on stdout, as `baton serve` writes them (apps/api/src/logger.ts; apps never import each other).
import winston from 'winston';

const SECRET_KEYS = /pass(word)?|secret|token|authorization|private|key$/i;

/** Drops fields whose names suggest secrets, in case one is ever passed to a log call by mistake. */
const redact = winston.format((info) => {
  for (const k of Object.keys(info)) if (SECRET_KEYS.test(k)) info[k] = '[redacted]';
  return info;
});

export function createWorkerLogger(level: string, opts: { stream?: NodeJS.WritableStream } = {}): winston.Logger {
  return winston.createLogger({
    level,
    format: winston.format.combine(redact(), winston.format.timestamp(), winston.format.json()),
    transports: [
      opts.stream ? new winston.transports.Stream({ stream: opts.stream }) : new winston.transports.Console(),
    ],
  });
}
