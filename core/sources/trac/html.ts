/** Minimal, dependency-free HTML handling for Trac's rendered wiki text (ticket descriptions and comments). */

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', rarr: '\u2192', larr: '\u2190', hellip: '\u2026',
  mdash: '\u2014', ndash: '\u2013', lsquo: '\u2018', rsquo: '\u2019', ldquo: '\u201c', rdquo: '\u201d', copy: '\u00a9',
  reg: '\u00ae', trade: '\u2122', laquo: '\u00ab', raquo: '\u00bb', middot: '\u00b7', bull: '\u2022', times: '\u00d7',
  deg: '\u00b0', para: '\u00b6', sect: '\u00a7', euro: '\u20ac', shy: '',
};

/** Decode character references in one pass (so "&amp;lt;" becomes "&lt;", not "<"). Unknown names stay as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z][a-z0-9]*);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref] ?? NAMED[ref.toLowerCase()] ?? whole;
  });
}

const BLOCK = /^(p|div|br|li|ul|ol|pre|blockquote|h[1-6]|tr|table|hr|dd|dt|dl)$/i;

/**
 * HTML to readable text: tags removed, entities decoded, block elements on their own lines, list items
 * prefixed with "- ", <pre> kept verbatim, runs of blank lines collapsed, trimmed.
 */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let pre = 0;
  const re = /<!--[\s\S]*?-->|<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*?(\/?)>|([^<]+)|(<)/g;
  for (const m of html.matchAll(re)) {
    if (m[4] !== undefined || m[5] !== undefined) {
      const raw = m[4] ?? m[5]!;
      out.push(pre ? decodeEntities(raw) : decodeEntities(raw.replace(/[ \t\r\n]+/g, ' ')));
      continue;
    }
    const tag = m[2];
    if (!tag) continue; // comment
    const closing = m[1] === '/';
    const name = tag.toLowerCase();
    if (name === 'script' || name === 'style') continue;
    if (name === 'pre') {
      pre = Math.max(0, pre + (closing ? -1 : 1));
      out.push('\n');
    } else if (name === 'li') {
      if (!closing) out.push('\n- ');
    }
    else if (BLOCK.test(name)) out.push('\n');
    else if ((name === 'td' || name === 'th') && closing) out.push(' ');
  }
  return out
    .join('')
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+$/g, '').replace(/^ (?=\S)/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
