/**
 * A document read as a copy of one read before: a template's per-recipient copies differ only
 * inside a few leaf blocks (the merge fields), so a copy's blocks are the earlier document's,
 * found by comparing strings instead of tokenising the whole document again (decision 0050).
 *
 * The copy is read as the earlier document's blocks when, in order: everything before its first
 * leaf is the same string; between two leaves, the same markup as between those leaves in the
 * earlier document; each leaf either the same string as the earlier leaf (read by the block
 * reader the same way, from the same state: after a container's markup that is the same) or,
 * read by the block reader from that place, a leaf of the same element; and everything after
 * the last leaf the same string. Then the containers around the leaves are the same, and the
 * document's text is put together from the same tree with the changed leaves' texts. A changed
 * leaf also passes the checks the block reader leaves to regular expressions (elements it does
 * not cover anywhere, a second body), which the rest passed in the earlier document. Anything
 * else: null, and the document is read whole. The walk takes the leaves that lie in the common
 * prefix or suffix of the two documents (src/lib/document-copies.ts, the search the link
 * sites' copies share) without comparing them one by one: they are the same strings.
 * test/mail/html-text-copies.test.ts proves it equal to reading the document whole.
 */
import { changedSpan } from '../../lib/document-copies.js';
import { leafPassesDocumentChecks, readBlock, tokenAt, Uncovered, type Block, type Leaf, type ReadDocument } from './blocks.js';

const LT = 60;

/** A document read whole, with what comparing a copy to it needs. */
export class ReadReference {
  /** The markup before the first leaf, between leaves (gaps[i] before leaf i, i ≥ 1) and after the last. */
  private readonly head: string;
  private readonly gaps: string[];
  private readonly tail: string;

  constructor(
    private readonly html: string,
    private readonly read: ReadDocument,
    /** The text of each leaf, by index. */
    readonly texts: readonly string[],
  ) {
    const { leaves } = read;
    this.head = html.slice(0, leaves[0].start);
    this.gaps = leaves.map((leaf, i) => (i === 0 ? '' : html.slice(leaves[i - 1].start + leaves[i - 1].source.length, leaf.start)));
    const last = leaves[leaves.length - 1];
    this.tail = html.slice(last.start + last.source.length);
  }

  get body(): readonly Block[] {
    return this.read.body;
  }

  /** A reference needs a leaf to compare from. */
  static accepts(read: ReadDocument): boolean {
    return read.leaves.length > 0;
  }

  /**
   * The copy's leaves (the reference's, and new ones where the copy differs), or null when
   * `html` is not read as a copy of this document.
   */
  leavesOf(html: string): { leaves: Leaf[]; changed: Leaf[] } | null {
    if (!sameAt(html, 0, this.head)) return null;
    const own = this.read.leaves;
    // The leaves before the changed span are the same at the same places; from a place in the
    // common suffix at the same distance from the end, the rest is the same too.
    const { prefix, suffix } = changedSpan(this.html, html);
    const unchangedFrom = this.html.length - suffix;
    const delta = html.length - this.html.length;
    const leaves: Leaf[] = [];
    const changed: Leaf[] = [];
    let i = 0;
    while (i < own.length && own[i].start + own[i].source.length <= prefix) leaves.push(own[i++]);
    /** Where the walk is in the earlier document, and in the copy. */
    let earlierAt = i === 0 ? this.head.length : own[i - 1].start + own[i - 1].source.length;
    let at = earlierAt;
    for (; i < own.length; i++) {
      if (earlierAt >= unchangedFrom && at - earlierAt === delta) {
        for (; i < own.length; i++) leaves.push(own[i]);
        return { leaves, changed };
      }
      const earlier = own[i];
      if (i > 0) {
        if (!sameAt(html, at, this.gaps[i])) return null;
        at += this.gaps[i].length;
      }
      earlierAt = earlier.start + earlier.source.length;
      if (sameAt(html, at, earlier.source)) {
        leaves.push(earlier);
        at += earlier.source.length;
        continue;
      }
      const leaf = readLeafAt(html, at, earlier);
      if (leaf === null) return null;
      leaves.push(leaf);
      changed.push(leaf);
      at += leaf.source.length;
    }
    if (earlierAt >= unchangedFrom && at - earlierAt === delta) return { leaves, changed };
    if (html.length - at !== this.tail.length || !sameAt(html, at, this.tail)) return null;
    return { leaves, changed };
  }
}

/**
 * `html.startsWith(part, at)`, as a comparison of equal strings: V8 compares those with a
 * native loop over the characters, where startsWith visits them one by one (~5 ns each).
 */
function sameAt(html: string, at: number, part: string): boolean {
  return html.slice(at, at + part.length) === part;
}

/** The leaf block of the same element as `earlier` at `at`, read by the block reader, or null. */
function readLeafAt(html: string, at: number, earlier: Leaf): Leaf | null {
  if (html.charCodeAt(at) !== LT) return null;
  try {
    const token = tokenAt(html, at);
    if (token === null || token.kind !== 'open' || token.name !== earlier.name) return null;
    const siblings: Block[] = [];
    const found: Leaf[] = [];
    readBlock(html, at, token.end, token.name, siblings, found);
    if (found.length !== 1 || siblings[0] !== found[0] || !leafPassesDocumentChecks(found[0].source)) return null;
    return { ...found[0], index: earlier.index };
  } catch (e) {
    if (e instanceof Uncovered) return null;
    throw e;
  }
}
