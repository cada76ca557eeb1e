/** What the card and plot tests read back from emitted files: the Hub's own metadata parser, SVG bars. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { expect } from 'vitest';
import { runPython } from './python.ts';

/** The card's metadata as the Hub's own library reads it (huggingface_hub.DatasetCard: PyYAML underneath). */
export async function hubMetadata(card: string): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'foresight-card-'));
  try {
    await writeFile(join(dir, 'README.md'), card);
    const code = 'import json, sys\nfrom huggingface_hub import DatasetCard\nprint(json.dumps(DatasetCard.load(sys.argv[1]).data.to_dict()))';
    return JSON.parse(await runPython(code, [join(dir, 'README.md')])) as Record<string, unknown>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_' });

/** Every element of a parsed SVG, with its tag name (depth first). */
function elements(node: unknown, tag = 'svg'): Array<{ tag: string; attrs: Record<string, string> }> {
  if (Array.isArray(node)) return node.flatMap((n) => elements(n, tag));
  if (!node || typeof node !== 'object') return [];
  const attrs = Object.fromEntries(Object.entries(node).filter(([k]) => k.startsWith('@_')).map(([k, v]) => [k.slice(2), String(v)]));
  return [{ tag, attrs }, ...Object.entries(node).filter(([k]) => !k.startsWith('@_') && k !== '#text').flatMap(([k, v]) => elements(v, k))];
}

/** Every element of an SVG document, after checking it is well-formed XML. */
export function svgElements(svg: string): Array<{ tag: string; attrs: Record<string, string> }> {
  expect(XMLValidator.validate(svg)).toBe(true);
  return elements((xml.parse(svg) as { svg: unknown }).svg);
}

/** The bars of an SVG: vega labels each with its values ("days (gap_days): 0 – 20; chains: 2; split: test"). */
export function bars(svg: string): string[] {
  return svgElements(svg).filter((e) => e.attrs['aria-roledescription'] === 'bar').map((e) => e.attrs['aria-label']!);
}
