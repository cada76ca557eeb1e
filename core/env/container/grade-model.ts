/** What grading takes and gives (container/grade.ts): the row's grading bundle, the limits, the options, the scores and results. */
import { z } from 'zod';
import type { Config } from '../../foundation/config.ts';
import type { RunProblem } from '../runners/evidence.ts';
import type { Runner, TestStatus } from '../runners/types.ts';
import type { ServiceImageOptions } from '../services/image.ts';
import { containerLimits } from './limits.ts';
import type { StateRun } from './run-report.ts';
import { isSafeRelativePath } from './tar.ts';
import type Docker from 'dockerode';

const RepoPath = z.string().refine(isSafeRelativePath, { message: 'must be a repo-relative path inside the repository' });

export const BundleFileSchema = z.object({
  path: RepoPath,
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
});
/** `keep`: modules run for the data files they read, only their cases naming the files (runners/types.ts KeepRule); absent in older rows. */
export const BundlePartSchema = z.object({
  files: z.array(BundleFileSchema),
  run: z.array(RepoPath),
  keep: z.array(z.object({ module: RepoPath, data: z.array(RepoPath) })).default([]),
});
/** The row's `grading_bundle` (a JSON string in the dataset): the test files each score needs. */
export const GradingBundleSchema = z.object({ version: z.literal(1), x: BundlePartSchema, y: BundlePartSchema });
/** A bundle as written (its parts' `keep` optional); ParsedBundle, as grading reads it. */
export type GradingBundle = z.input<typeof GradingBundleSchema>;
export type ParsedBundle = z.infer<typeof GradingBundleSchema>;
export type BundleFile = z.infer<typeof BundleFileSchema>;

export interface GradeLimits {
  memoryBytes?: number;
  pidsLimit?: number;
  nanoCpus?: number;
  /** Size of the tmpfs at /tmp, the grading container's only writable place. */
  diskBytes?: number;
  /** Per test run: SIGTERM after this, SIGKILL 5 s later (default 600). */
  timeoutSec?: number;
}

/** The grading limits from the configuration's validate section: grading runs tests as validate does. */
export function gradeLimits(cfg: Config['validate']): GradeLimits {
  const { runTimeoutSec, ...rest } = containerLimits(cfg);
  return { ...rest, timeoutSec: runTimeoutSec };
}

export interface GradeOptions {
  docker: Docker;
  /** The row's tier-3 eval image (`docker_image`). */
  image: string;
  runner: Runner;
  /** The agent's patch (a unified git diff); empty: nothing to apply. */
  patch: string;
  /** The row's own patch (PR1's source diff): the harness is restored to the base with it applied. Empty: the base's. */
  goldPatch?: string;
  bundle: GradingBundle;
  /** FAIL_TO_PASS, PASS_TO_PASS, ANTICIPATION_FAIL_TO_PASS test ids (the runner's ids). */
  f2p: readonly string[];
  p2p: readonly string[];
  anti: readonly string[];
  limits?: GradeLimits;
  /** Extra environment of the test runs (a recipe's `env`). */
  env?: Readonly<Record<string, string>>;
  /** The run's signal: an abort removes the container at once and throws its reason. */
  signal?: AbortSignal;
  /**
   * The row's database backend (`db_backend`): a service backend is started in a sidecar on an internal
   * network next to the grading container, as validation ran it; sqlite or absent: none, no network.
   */
  backend?: string;
  /** Where the service image's build lock and log go, and its base image's alias (a service backend only). */
  service?: Pick<ServiceImageOptions, 'baseAlias' | 'lockDir' | 'log' | 'logDir'>;
  /**
   * The defences against a patch that games its score (harness restore, isolated runner, piped report,
   * read-only root and disk limit, a second run when the first is no evidence). Default on; off only
   * shows what they stop (the red-team tests' negative controls).
   */
  guard?: boolean;
}

/** A test's status in a graded run; `missing`: the run did not report it (not passing). */
export type GradedStatus = TestStatus | 'missing';

export type Score =
  | {
      kind: 'scored';
      value: number;
      passed: number;
      total: number;
      /** Set when the score is 0 because the patch's runs were no evidence while the gold run's were. */
      reason?: 'no_evidence_under_patch';
      detail?: string;
    }
  /** The run was no evidence, and not because of the patch (or not yet known): never 0 %. */
  | { kind: 'infra'; reason: RunProblem['reason']; detail: string }
  /** No test to score (an empty set): nothing was run. */
  | { kind: 'empty' };

export interface GradedRun {
  kind: StateRun['kind'];
  exitCode: number | null;
  durationMs: number;
  /** Every test the runner reported, with its status. */
  tests: Record<string, TestStatus>;
  collectionErrors: string[];
  /** Why the run is not evidence, or null. */
  problem: RunProblem | null;
  outputTail: string;
  /** Runs it took (2: the first was no evidence and was run again in a new container). */
  attempts: number;
}

/** A file of the test harness the patch changed, put back before the tests ran. */
export interface TamperedFile {
  path: string;
  /** `reset` to the gold version, `removed` (new, or absent from the gold tree), `sections` (its test-configuration sections reset). */
  action: 'reset' | 'removed' | 'sections';
}

interface Common {
  /** `git apply` output (or why nothing was applied), then what was restored before the bundle. */
  applyLog: string;
  x: Score;
  y: Score;
  /** X − Y; null when either is not scored. */
  gap: number | null;
  durationMs: number;
}

export type GradeResult =
  | (Common & {
      /** The patch does not apply (or leaves a tree the harness cannot be restored in): X = Y = 0 (scored), gap 0. */
      kind: 'patch_failed';
      /** git's message. */
      detail: string;
    })
  | (Common & {
      kind: 'graded';
      /** Bundle or graded test files the patch touched, reset to the base (or removed) before the bundle. */
      reset: string[];
      /** Every harness file the patch changed, and what was done with it (the union over the runs). */
      tampered: TamperedFile[];
      /** Status of each FAIL_TO_PASS / PASS_TO_PASS test in the X run, of each ANTICIPATION test in the Y run. */
      f2p: Record<string, GradedStatus>;
      p2p: Record<string, GradedStatus>;
      anti: Record<string, GradedStatus>;
      /** PASS_TO_PASS tests not passing in the X run; null when the X run is no evidence. */
      p2pRegressions: string[] | null;
      runs: { x: GradedRun | null; y: GradedRun | null };
    });

