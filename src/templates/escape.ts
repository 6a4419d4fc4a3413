/**
 * HTML escaping for merge values. Covers the five characters that can end a text node or an
 * attribute value (quoted either way), so a value is safe in both positions.
 */
export function escapeHtml(value: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < value.length; i++) {
    let entity: string;
    switch (value.charCodeAt(i)) {
      case 0x26:
        entity = '&amp;';
        break;
      case 0x3c:
        entity = '&lt;';
        break;
      case 0x3e:
        entity = '&gt;';
        break;
      case 0x22:
        entity = '&quot;';
        break;
      case 0x27:
        entity = '&#39;';
        break;
      default:
        continue;
    }
    out += value.slice(last, i) + entity;
    last = i + 1;
  }
  // Most values need no escaping: return them without copying.
  return last === 0 ? value : out + value.slice(last);
}
