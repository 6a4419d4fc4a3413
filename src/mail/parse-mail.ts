import type { ParsedMail, SimpleParserOptions } from 'mailparser';

/**
 * mailparser's simpleParser, loaded at the first message parsed: with libmime, iconv-lite,
 * encoding-japanese and linkify-it it costs ~85 ms of CPU to load, which the processes that
 * parse mail (bounces, complaints, submissions, all received by the API process) spend when
 * mail arrives rather than at every start, and the workers never (docs/decisions/0049-start-up-cpu.md).
 */
export async function parseMail(raw: Buffer | string, options: SimpleParserOptions): Promise<ParsedMail> {
  const { simpleParser } = await import('mailparser');
  return simpleParser(raw, options);
}
