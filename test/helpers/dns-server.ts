/**
 * A real DNS server on 127.0.0.1 (UDP and TCP on the same random port) serving a zone the
 * test edits while it runs. Point code at it with `address` ("127.0.0.1:PORT"), exactly as
 * POSTLINE_DNS_SERVERS would.
 *
 * Answers: the records of the asked type; else a CNAME at the name (followed inside the
 * zone); else NOERROR with no answer (NODATA) when the name has other records; else NXDOMAIN.
 * TXT values longer than 255 bytes are split into 255-byte character-strings, as a DNS host
 * does with a DKIM RSA key. Answers too big for UDP come back truncated and the client
 * retries over TCP, which is why TCP is served too.
 */
import { createTCPServer, createUDPServer, Packet } from 'dns2';
import type { DnsHandler, Resource } from 'dns2';

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface RecordsByType {
  A: string[];
  AAAA: string[];
  CNAME: string[];
  MX: MxRecord[];
  /** A string is one TXT record (chunked automatically); a string[] gives the chunks explicitly. */
  TXT: (string | string[])[];
  /** Under the reverse name of an address: see reverseName(). */
  PTR: string[];
}
export type RecordType = keyof RecordsByType;

export type DnsFailure = 'SERVFAIL' | 'REFUSED';

export interface TestDnsServer {
  port: number;
  /** "127.0.0.1:PORT", the form node's Resolver#setServers and POSTLINE_DNS_SERVERS take. */
  address: string;
  setRecords<T extends RecordType>(name: string, type: T, records: RecordsByType[T], ttlSeconds?: number): void;
  /** Remove one record set, or every record of a name. */
  deleteRecords(name: string, type?: RecordType): void;
  /** Answer every query for `name` with this error code until cleared. */
  fail(name: string, rcode: DnsFailure): void;
  clear(): void;
  /** How many queries for name (and type) arrived: lets a test prove a cache was used. */
  queryCount(name: string, type?: RecordType): number;
  close(): Promise<void>;
}

const TYPE_CODES: Record<RecordType, number> = {
  A: Packet.TYPE.A,
  AAAA: Packet.TYPE.AAAA,
  CNAME: Packet.TYPE.CNAME,
  MX: Packet.TYPE.MX,
  TXT: Packet.TYPE.TXT,
  PTR: Packet.TYPE.PTR,
};
const TYPE_NAMES = new Map<number, RecordType>(Object.entries(TYPE_CODES).map(([k, v]) => [v, k as RecordType]));
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** The PTR owner name of an IPv4 address: 10.0.0.127.in-addr.arpa for 127.0.0.10. */
export function reverseName(ipv4: string): string {
  return `${ipv4.split('.').reverse().join('.')}.in-addr.arpa`;
}

/** RFC 1035 character-strings are at most 255 bytes. */
export function splitTxt(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const chunks: string[] = [];
  for (let i = 0; i < bytes.length; i += 255) chunks.push(bytes.subarray(i, i + 255).toString('utf8'));
  return chunks.length ? chunks : [''];
}

interface RecordSet {
  ttl: number;
  records: unknown[];
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, Map<RecordType, RecordSet>>();
  const failures = new Map<string, DnsFailure>();
  const counts = new Map<string, number>();

  function toResource(name: string, type: RecordType, ttl: number, record: unknown): Resource {
    const base = { name, type: TYPE_CODES[type], class: Packet.CLASS.IN, ttl };
    switch (type) {
      case 'A':
      case 'AAAA':
        return { ...base, address: record as string } as Resource;
      case 'CNAME':
      case 'PTR':
        return { ...base, domain: norm(record as string) } as Resource;
      case 'MX': {
        const mx = record as MxRecord;
        return { ...base, exchange: norm(mx.exchange), priority: mx.priority } as Resource;
      }
      case 'TXT':
        return { ...base, data: Array.isArray(record) ? record : splitTxt(record as string) } as Resource;
    }
  }

  /** Fill `response` for (name, type); returns the rcode. CNAME chains are followed inside the zone. */
  function answer(response: Packet, qname: string, type: RecordType | undefined): number {
    let name = norm(qname);
    let owner = qname;
    for (let hops = 0; hops < 8; hops++) {
      const sets = zone.get(name);
      if (!sets) return hops === 0 ? RCODE.NXDOMAIN : RCODE.NOERROR;
      const wanted = type ? sets.get(type) : undefined;
      if (wanted) {
        for (const r of wanted.records) response.answers.push(toResource(owner, type!, wanted.ttl, r));
        return RCODE.NOERROR;
      }
      const cname = sets.get('CNAME');
      if (!cname || type === 'CNAME') return RCODE.NOERROR;
      const target = norm(cname.records[0] as string);
      response.answers.push(toResource(owner, 'CNAME', cname.ttl, target));
      name = target;
      owner = target;
    }
    return RCODE.SERVFAIL;
  }

  const handle: DnsHandler = (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const [question] = request.questions;
    if (!question) {
      response.header.rcode = RCODE.REFUSED;
      void send(response);
      return;
    }
    const type = TYPE_NAMES.get(question.type);
    const name = norm(question.name);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    if (type) counts.set(`${name}/${type}`, (counts.get(`${name}/${type}`) ?? 0) + 1);
    const failure = failures.get(name);
    response.header.rcode = failure ? RCODE[failure] : answer(response, question.name, type);
    void send(response);
  };

  const { udp, tcp, port } = await listenOnSamePort(handle);

  return {
    port,
    address: `127.0.0.1:${port}`,
    setRecords(name, type, records, ttlSeconds = 300) {
      const key = norm(name);
      if (!zone.has(key)) zone.set(key, new Map());
      zone.get(key)!.set(type, { ttl: ttlSeconds, records: [...records] });
    },
    deleteRecords(name, type) {
      const key = norm(name);
      if (!type) zone.delete(key);
      else zone.get(key)?.delete(type);
    },
    fail(name, rcode) {
      failures.set(norm(name), rcode);
    },
    clear() {
      zone.clear();
      failures.clear();
      counts.clear();
    },
    queryCount(name, type) {
      return counts.get(type ? `${norm(name)}/${type}` : norm(name)) ?? 0;
    },
    async close() {
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

/** Bind UDP to a random port, then TCP to the same number; retry if TCP finds it taken. */
async function listenOnSamePort(handle: DnsHandler) {
  for (let attempt = 0; ; attempt++) {
    const udp = createUDPServer(handle);
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = createTCPServer(handle);
    const ok = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) return { udp, tcp, port };
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (attempt >= 10) throw new Error('could not bind UDP and TCP to the same port');
  }
}
