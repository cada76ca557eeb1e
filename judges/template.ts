import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ForesightError } from '../core/foundation/errors.ts';
import { DATA_RULES } from './untrusted.ts';
import type { Prompt } from './types.ts';

/**
 * A judge's prompt template: a markdown file with a `## system` and a `## user` section and `{{name}}`
 * placeholders. Kept beside the judge so a prompt reads as text; its content is part of the stage's code
 * fingerprint (read through `new URL(..., import.meta.url)`) and of every cached answer's key.
 */
export interface Template {
  system: string;
  user: string;
  file: string;
}

export function loadTemplate(url: URL): Template {
  const file = fileURLToPath(url);
  const text = readFileSync(file, 'utf8');
  const m = /^## system\s*\n([\s\S]*?)^## user\s*\n([\s\S]*)$/m.exec(text);
  if (!m) throw new ForesightError(`prompt template ${file} lacks a "## system" and a "## user" section`, { remedy: 'restore the template from git' });
  return { system: m[1]!.trim(), user: m[2]!.trim(), file };
}

/**
 * Fill the placeholders in one pass (a value containing `{{x}}` is never expanded again); every placeholder
 * must be given and every value used. The system prompt always ends with the rules for untrusted data.
 */
export function render(t: Template, vars: Record<string, string>): Prompt {
  const used = new Set<string>();
  const fill = (s: string) =>
    s.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
      const v = vars[name];
      if (v === undefined) throw new ForesightError(`prompt template ${t.file} uses {{${name}}}, which its judge does not give`, { remedy: 'fix the template or the judge' });
      used.add(name);
      return v;
    });
  const prompt = { system: `${fill(t.system)}\n\n${DATA_RULES}`, user: fill(t.user) };
  const unused = Object.keys(vars).filter((k) => !used.has(k));
  if (unused.length) throw new ForesightError(`prompt template ${t.file} never uses ${unused.join(', ')}`, { remedy: 'fix the template or the judge' });
  return prompt;
}
