/**
 * A compiled MIME tree (nodemailer's MimeNode, from MailComposer.compile()) written to bytes in
 * one synchronous pass. MimeNode.build() streams every node through a pipeline of its own
 * (PassThrough, encoder, newline and last-newline transforms, a setImmediate per step): about
 * 1 ms of CPU for a two-part message, the largest share of a worker's build step
 * (docs/benchmarks.md). Here nodemailer still writes every header block (its
 * buildHeaders: addresses, encoded words, folding, boundaries) and encodes every body with its
 * own encoders (quoted-printable and base64 `encode` + `wrap`); only the walk that joins them is
 * ours, and it writes what MimeNode.stream() writes, byte for byte
 * (test/mail/mime-build.test.ts compares the two on the same trees).
 *
 * Trees it does not cover return null and are built by build(): content from a stream, a file
 * or a URL, raw nodes, user transforms or process functions, transfer encodings other than
 * 7bit, quoted-printable and base64, quoted-printable outside text/* (nodemailer's binary mode)
 * or past 64 KiB (its encoder's slices). composeMessage uses MailComposer only for the shapes its
 * narrow writer (src/mail/mime/) leaves to it, and this walk is the reference that writer is
 * tested against.
 */
import { encode as base64Encode, wrap as base64Wrap } from 'nodemailer/lib/base64';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';

/** The parts of nodemailer's MimeNode this walk reads (its typings do not declare them all). */
export interface MimeTreeNode {
  childNodes: MimeTreeNode[];
  content?: unknown;
  /** Set by buildHeaders, as is `multipart`. */
  multipart?: string | false;
  boundary?: string | false;
  newline?: string;
  _raw?: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
  getHeader(name: string): unknown;
  getTransferEncoding(): string | false;
  buildHeaders(): string;
}

/** nodemailer's line length for encoded bodies (its encoders' default). */
const LINE_LENGTH = 76;
/**
 * nodemailer's quoted-printable encoder works in slices of 64 KiB, told the byte that follows
 * each; a longer body is left to build() rather than imitated.
 */
const QP_MAX_BYTES = 64 * 1024;

export function buildMimeSync(root: MimeTreeNode): Buffer | null {
  // Each node's transfer encoding, read once here (nodemailer scans the content for it).
  const encodings = new Map<MimeTreeNode, string | false>();
  if (!covered(root, true, encodings)) return null;
  const out: string[] = [];
  writeNode(root, out, encodings);
  let message = out.join('');
  // What createReadStream's LastNewline and LeWindows transforms do to the whole output.
  if (!message.endsWith('\n')) message += message.endsWith('\r') ? '\n' : '\r\n';
  if (root.newline === 'win') message = message.replace(/(?<!\r)\n/g, '\r\n');
  return Buffer.from(message, 'utf8');
}

function covered(node: MimeTreeNode, isRoot: boolean, encodings: Map<MimeTreeNode, string | false>): boolean {
  if (node._raw || node._transforms.length > 0 || node._processFuncs.length > 0) return false;
  if (isRoot ? node.newline !== 'win' : node.newline !== undefined && node.newline !== 'win') return false;
  const encoding = node.getTransferEncoding();
  encodings.set(node, encoding);
  if (node.content) {
    if (typeof node.content !== 'string' && !Buffer.isBuffer(node.content)) return false;
    if (encoding === 'quoted-printable') {
      const text = /^text\//i.test(String(node.getHeader('Content-Type') ?? '').trim());
      if (!text || Buffer.byteLength(node.content) > QP_MAX_BYTES) return false;
    } else if (!(encoding === 'base64' || (encoding === '7bit' && typeof node.content === 'string'))) {
      return false;
    }
  }
  return node.childNodes.every((child) => covered(child, false, encodings));
}

/** MimeNode.stream(): the header block, the encoded content, then the children between boundaries. */
function writeNode(node: MimeTreeNode, out: string[], encodings: Map<MimeTreeNode, string | false>): void {
  const encoding = encodings.get(node);
  out.push(node.buildHeaders() + '\r\n\r\n');
  if (node.content) {
    const content = node.content as string | Buffer;
    if (encoding === '7bit') out.push(content as string);
    else if (encoding === 'base64') out.push(base64Wrap(base64Encode(bytes(content)), LINE_LENGTH));
    else out.push(quotedPrintable(bytes(content)));
  }
  if (node.multipart) {
    node.childNodes.forEach((child, i) => {
      out.push((i > 0 ? '\r\n' : '') + '--' + String(node.boundary) + '\r\n');
      writeNode(child, out, encodings);
    });
    out.push('\r\n--' + String(node.boundary) + '--\r\n');
  }
}

const bytes = (content: string | Buffer): Buffer => (typeof content === 'string' ? Buffer.from(content, 'utf8') : content);

/**
 * A text body as nodemailer's qp.Encoder writes it when the body arrives in one chunk: the
 * whitespace that ends the body is held back and encoded after the rest (it ends the input, so
 * its last character is encoded), each part soft-wrapped on from the last unfinished line.
 */
function quotedPrintable(body: Buffer): string {
  let end = body.length;
  while (end > 0 && (body[end - 1] === 0x20 || body[end - 1] === 0x09)) end--;
  let out = '';
  let line = '';
  for (const part of [body.subarray(0, end), body.subarray(end)]) {
    if (part.length === 0) continue;
    const wrapped = qpWrap(line + qpEncode(part), LINE_LENGTH);
    const lastLf = wrapped.lastIndexOf('\n');
    out += wrapped.slice(0, lastLf + 1);
    line = wrapped.slice(lastLf + 1);
  }
  return out + line;
}
