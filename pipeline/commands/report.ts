/** `foresight report`: one self-contained HTML page of an emitted dataset. */
export async function reportCommand(o: { dataset: string; out?: string }): Promise<void> {
  // Loaded on use: the other commands never pay for the report's modules.
  const { writeReport } = await import('../report/index.ts');
  const res = await writeReport({ dataset: o.dataset, out: o.out });
  for (const note of res.notes) process.stderr.write(`foresight report: ${note}\n`);
  const evals = res.evalModels.map((m) => `${m.model} on ${m.split} (${m.instances} graded, eval/${m.run})`).join(', ');
  process.stderr.write(
    `foresight report: ${res.chains} chains (${res.test} in test), ${res.plots} plots, per-state outcomes for ${res.withStates}, eval results: ${evals || 'none'}\n`,
  );
  process.stdout.write(`${res.path}\n`);
}
