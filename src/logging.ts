import type { LoggerOptions } from 'pino';

/**
 * How logs look: pretty lines (pino-pretty) when stdout is a terminal, one JSON object per
 * line otherwise (files, pipes, log shippers, containers without a TTY). The same options
 * serve the server's logger and Fastify's request logger.
 */
export function logFormat(stream: { isTTY?: boolean } = process.stdout): 'pretty' | 'json' {
  return stream.isTTY ? 'pretty' : 'json';
}

export function loggerOptions(level: string, redact: string[], format = logFormat()): LoggerOptions {
  return {
    level,
    redact,
    ...(format === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  };
}
