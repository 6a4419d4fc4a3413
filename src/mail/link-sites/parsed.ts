/**
 * A document's link sites as htmlparser2 tokenises it: the reference the narrow scanner
 * (./narrow.ts) is proven equal to, and the path for the documents it does not cover.
 */
import { Parser } from 'htmlparser2';
import { addTagSites, NOTRACK_ATTRIBUTE, type AttributeSpan, type Sites } from './sites.js';

export function parsedLinkSites(html: string): Sites {
  const sites: Sites = { links: [], removals: [], bodyClose: -1, htmlClose: -1 };
  let tag = '';
  let href: AttributeSpan | null = null;
  let hrefSeen = false;
  let notrack: AttributeSpan[] = [];

  // Close tags are caught at the tokenizer callback, where the raw offsets are exact; the
  // handler's onclosetag also fires for implied closes and not for stray ones.
  class Locator extends Parser {
    override onclosetag(start: number, endIndex: number): void {
      const name = html.slice(start, endIndex).toLowerCase();
      // In HTML mode a close tag's name starts right after "</".
      if (name === 'body') sites.bodyClose = start - 2;
      else if (name === 'html') sites.htmlClose = start - 2;
      super.onclosetag(start, endIndex);
    }
  }

  const parser: Parser = new Locator(
    {
      onopentagname(name) {
        tag = name;
        href = null;
        hrefSeen = false;
        notrack = [];
      },
      onattribute(name, value, quote) {
        if (tag !== 'a' && tag !== 'area') return;
        // startIndex = attribute name start, endIndex = just past the attribute.
        const span: AttributeSpan = { start: parser.startIndex, end: parser.endIndex, value, quote };
        if (name === 'href' && !hrefSeen) {
          hrefSeen = true;
          href = span;
        } else if (name === NOTRACK_ATTRIBUTE) {
          notrack.push(span);
        }
      },
      onopentag() {
        if (tag === 'a' || tag === 'area') addTagSites(html, sites, href, notrack);
        tag = '';
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return sites;
}
