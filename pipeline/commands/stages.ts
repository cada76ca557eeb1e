import { codeClosure } from '../../core/foundation/code-closure.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import { STAGE_DEFS } from '../registry.ts';
import { summarize } from '../summary.ts';
import { dataRootOf, repoName, settings, type CommonOpts } from './shared.ts';

/** `foresight stages`: each stage with the fingerprint of its code. */
export async function stagesCommand(o: { files?: boolean }): Promise<void> {
  const lines: string[] = [];
  for (const [name, def] of STAGE_DEFS) {
    const c = await codeClosure(def.entry, PROJECT_ROOT);
    lines.push(`${name.padEnd(9)} ${c.fingerprint.slice(0, 16)}  ${c.modules.length} modules, ${c.runtimeFiles.length} runtime files, ${c.packages.length} packages`);
    if (o.files) lines.push(...[...c.files, ...c.packages].map((f) => `    ${f}`));
  }
  process.stdout.write(lines.join('\n') + '\n');
}

/** `foresight summary`: the emitted chains. */
export async function summaryCommand(o: CommonOpts): Promise<void> {
  const { config } = settings('summary', o);
  process.stdout.write((await summarize(dataRootOf(config), repoName(o.repo))) + '\n');
}
