import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

/**
 * Token colours for the HTML editor that keep a 7:1 contrast on white and on the active line's
 * tint (CodeMirror's default palette has lighter ones that fail WCAG AA, which axe reports).
 */
export const readableHighlighting = syntaxHighlighting(HighlightStyle.define([
  { tag: [t.tagName, t.typeName], color: '#0b5323' },
  { tag: [t.attributeName, t.propertyName], color: '#5b1f86' },
  { tag: [t.string, t.attributeValue], color: '#8a1414' },
  { tag: t.comment, color: '#5a4600', fontStyle: 'italic' },
  { tag: [t.keyword, t.atom, t.bool, t.url], color: '#2a1f80' },
  { tag: [t.escape, t.regexp, t.special(t.string), t.character], color: '#7a2e00' },
  { tag: [t.angleBracket, t.punctuation, t.separator, t.meta, t.processingInstruction, t.documentMeta], color: '#3d4450' },
  { tag: t.invalid, color: '#a31b1b' },
]));
