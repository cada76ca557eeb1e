/**
 * The shape of `data/<repo>/env-recipes.json`: per dependency era, every install candidate tried, the one
 * chosen and why the others were rejected (image/choose-env.ts reads and writes it).
 */
import { z } from 'zod';

/** The choice file's name under data/<repo>/. */
export const CHOICE_FILE = 'env-recipes.json';

export const TriedSchema = z.object({
  label: z.string(),
  /** The candidate's env key computed on the base's tag (not the env image's tag, which uses the base's id). */
  envKey: z.string(),
  outcome: z.enum(['chosen', 'rejected']),
  /** Why it was rejected (one line), or the env image it chose (`foresight-env:<key>`). */
  reason: z.string(),
  install: z.array(z.string()),
  /** Where a rejected candidate failed: its install, or its report at the PR's head (absent in files written before the probe: install). */
  stage: z.enum(['install', 'report', 'skipped']).optional(),
  /** Test-run environment the chosen candidate's check needed beyond its recipe (warnings not turned into errors). */
  env: z.record(z.string(), z.string()).optional(),
  /** A chosen candidate's check at the PR's head (`trustworthy: ...`, `inconclusive: ...`, `unverified: ...`); absent: not probed yet. */
  check: z.string().optional(),
  /** The detected candidate this one is, without requirements the offline wheels cannot provide (absent: detected itself). */
  from: z.string().optional(),
  /** Requirements the install left out (the offline wheels cannot provide them): dropped by name, or skipped by a best-effort step. */
  dropped: z.array(z.string()).optional(),
  /** Requirements it installed without their version pin (no offline version satisfies it). */
  unpinned: z.array(z.string()).optional(),
  /** A failed install's retry: the requirements it leaves out and those it unpins (taken again as recorded by the next run). */
  retry: z.object({ drop: z.array(z.string()), relax: z.array(z.string()) }).optional(),
});

export const EraSchema = z.object({
  /** The commit at which the era was first resolved. */
  commit: z.string(),
  chosen: z.string().nullable(),
  tried: z.array(TriedSchema),
  updated: z.string(),
});

export const ChoiceFileSchema = z.object({ version: z.literal(1), eras: z.record(z.string(), EraSchema) });

export type ChoiceFile = z.infer<typeof ChoiceFileSchema>;
export type Era = z.infer<typeof EraSchema>;
export type TriedCandidate = z.infer<typeof TriedSchema>;
