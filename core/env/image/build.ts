/**
 * Building one env image: the build container from the base (memory and pids limits, no capabilities but
 * those the root steps need), the apt step (root, network, then cut off), the prep step (root), a Node
 * image's node step (root) and deps step (BUILD_USER, network to the registry, scripts disabled), a Go
 * image's go deps step (BUILD_USER, network to the configured proxy; go-deps.ts), the network cut off, the
 * install step (offline, as BUILD_USER: the repository's code never runs as root), the stop and finish
 * steps, `docker commit` (see core/env/README.md).
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { absoluteGitDir } from '../../foundation/git.ts';
import { redact, registerSecret } from '../../foundation/secrets.ts';
import { buildFields } from '../recipes/schema.ts';
import { BASE_PYTHON, type BaseImage } from './base.ts';
import { aptScript, BUILD_USER, depsScript, finishScript, GO_DIR, GO_ENV, installScript, NODE_DIR, NODE_MODULES, nodeScript, prepScript, STOP_SCRIPT, VENV, VENV_PYTHON } from './build-scripts.ts';
import { forceRemove, ownerLabels, PID_LABEL, HOST_LABEL, RUN_LABEL, removeOnAbort } from '../container/cleanup.ts';
import type { EnvBuildLimits, EnvCommon, EnvImageRequest, EnvImageResult, PackageSources } from './types.ts';
import { goDepsScript, goDepsSetup, noGoProxyHint } from './go-deps.ts';
import { BASE_LABEL, COMMIT_LABEL, CREATED_LABEL, KEY_LABEL, REPO_LABEL } from './key.ts';
import { runExec } from '../container/exec.ts';
import { dockerError, logLine, splitRef, stepHeartbeat, type StepProgress } from './docker-image.ts';
import type { PipSources } from './pip-sources.ts';
import { releaseOf } from './release.ts';
import { fetchNodeTools, NODE_DIST_MOUNT, resolveNodeTools, type NodeTools } from './node-dist.ts';
import { npmSources, type NpmSources } from './npm-sources.ts';

const IMAGE_PATH = `${VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** Default limit of one env build (all steps). */
export const DEFAULT_BUILD_TIMEOUT_SEC = 1800;

/** Default memory of an env build container (swap included): pip compiling a C extension fits. */
export const DEFAULT_BUILD_MEMORY_BYTES = 4 * 1024 * 1024 * 1024;
/** Default pids of an env build container: a parallel compiler's processes fit, a fork bomb does not. */
export const DEFAULT_BUILD_PIDS_LIMIT = 1024;
const MIN_BUILD_MEMORY_BYTES = 256 * 1024 * 1024;
const MIN_BUILD_PIDS = 64;

/**
 * Capabilities the build container keeps (all others dropped). They are the root steps' only: the install
 * step runs as BUILD_USER, whose processes have none. The prep and finish steps chown to and from the build
 * user and reach into its directories (CHOWN, DAC_OVERRIDE).
 */
export const ROOT_STEP_CAPS: readonly string[] = ['CHOWN', 'DAC_OVERRIDE'];
/**
 * And apt-get's, when the recipe has system packages: it downloads as the `_apt` user (SETUID, SETGID) into
 * partial directories it chowns and chmods (FOWNER). Without FSETID dpkg's set-group-id bits are dropped,
 * which no container here could use (no-new-privileges).
 */
export const APT_CAPS: readonly string[] = ['FOWNER', 'SETUID', 'SETGID'];

/** The request's limits over the defaults, checked. */
export function envBuildLimits(limits: Partial<EnvBuildLimits> = {}): EnvBuildLimits {
  const out = { memoryBytes: limits.memoryBytes ?? DEFAULT_BUILD_MEMORY_BYTES, pidsLimit: limits.pidsLimit ?? DEFAULT_BUILD_PIDS_LIMIT };
  if (!Number.isSafeInteger(out.memoryBytes) || out.memoryBytes < MIN_BUILD_MEMORY_BYTES) {
    throw new ForesightError(`invalid env build memory limit ${out.memoryBytes} bytes`, {
      remedy: `pass limits.memoryBytes as a whole number of bytes, at least ${MIN_BUILD_MEMORY_BYTES / 1024 / 1024} MiB (default ${DEFAULT_BUILD_MEMORY_BYTES / 1024 ** 3} GiB)`,
    });
  }
  if (!Number.isSafeInteger(out.pidsLimit) || out.pidsLimit < MIN_BUILD_PIDS) {
    throw new ForesightError(`invalid env build pids limit ${out.pidsLimit}`, {
      remedy: `pass limits.pidsLimit as a whole number, at least ${MIN_BUILD_PIDS} (default ${DEFAULT_BUILD_PIDS_LIMIT})`,
    });
  }
  return out;
}

/**
 * The HostConfig of an env build container: the limits, no capability but the root steps', no privilege gain.
 * `network` (default: `apt`): on the default bridge until the build cuts it off (after apt, or after a Node
 * image's deps step).
 */
export function envBuildHostConfig(opts: { limits: EnvBuildLimits; apt: boolean; network?: boolean; binds: readonly string[] }): Docker.HostConfig & { CapAdd: string[] } {
  return {
    NetworkMode: (opts.network ?? opts.apt) ? 'bridge' : 'none',
    Binds: [...opts.binds],
    Memory: opts.limits.memoryBytes,
    MemorySwap: opts.limits.memoryBytes,
    PidsLimit: opts.limits.pidsLimit,
    CapDrop: ['ALL'],
    CapAdd: opts.apt ? [...ROOT_STEP_CAPS, ...APT_CAPS] : [...ROOT_STEP_CAPS],
    SecurityOpt: ['no-new-privileges'],
    Init: true,
  };
}

const DETAIL_LINES = 25;
const DETAIL_CHARS = 3000;

/** The last non-empty lines of a step's output (at most DETAIL_LINES, DETAIL_CHARS): a failure's detail. */
export function lastLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const tail = lines.slice(-DETAIL_LINES).join('\n');
  return tail.length > DETAIL_CHARS ? tail.slice(-DETAIL_CHARS) : tail;
}

/**
 * The detail of a failed install step: its last lines, the closing `[foresight] FAILED (exit N): <command>`
 * naming the command by its first line only. A multi-line command (a `python -c` script) would otherwise
 * fill the tail and push out pip's own errors, which say why it failed.
 */
export function failedStepTail(text: string): string {
  const at = text.lastIndexOf('[foresight] FAILED (exit ');
  if (at < 0) return lastLines(text);
  const rest = text.slice(at).replace(/\s+$/, '');
  const nl = rest.indexOf('\n');
  return lastLines(`${text.slice(0, at)}${nl < 0 ? rest : `${rest.slice(0, nl)} …`}`);
}

/**
 * The line of a package manager's output that says why its install failed (npm's first error past its
 * code, yarn's `error`, pnpm's `ERR_PNPM_*`, berry's `YN` error), as an `error:` line: what a rejected
 * candidate is recorded with.
 */
export function clientError(text: string): string | null {
  const lines = text.split('\n').map((l) => l.trim());
  const hit =
    lines.find((l) => /^npm (ERR!|error) /.test(l) && !/^npm (ERR!|error) (code|errno|syscall|A complete log|\s*$)/.test(l) && !/^npm (ERR!|error) (Log files|\/)/.test(l)) ??
    lines.find((l) => /^error [A-Z]/.test(l) || /ERR_PNPM_\w+/.test(l) || /YN\d{4}:.*(error|Error|would have been modified|must be)/.test(l));
  return hit === undefined ? null : `error: ${hit.replace(/^npm (ERR!|error) /, 'npm: ').slice(0, 280)}`;
}

/** A Node image's tools (fetched into the host's cache) and the registry its deps step reaches, or why it cannot be built. */
type NodeSetup = { ok: true; tools: NodeTools; dir: string; npm: NpmSources } | { ok: false; reason: string };

async function nodeSetup(recipe: EnvImageRequest['recipe'], sources: PackageSources | undefined): Promise<NodeSetup> {
  const registry = { registry: sources?.npmRegistry ?? null };
  const resolved = await resolveNodeTools(recipe, registry);
  if (!resolved.ok) return resolved;
  const fetched = await fetchNodeTools(resolved.tools, registry);
  if (!fetched.ok) return fetched;
  return { ok: true, tools: resolved.tools, dir: fetched.dir, npm: await npmSources({ registry: sources?.npmRegistry, token: sources?.npmToken }) };
}

/** Appends text to a build log, redacted. */
export type AppendLog = (text: string) => Promise<void>;

/** Start a build log at `logPath` with its header; what is appended later is redacted too. */
export async function openBuildLog(logPath: string, header: readonly string[]): Promise<AppendLog> {
  await mkdir(path.dirname(logPath), { recursive: true });
  await writeFile(logPath, redact(header.join('\n')));
  // Build logs leave the process: no credential (a pip index URL's, say) may reach them.
  return (text) => appendFile(logPath, redact(text.endsWith('\n') ? text : `${text}\n`));
}

export interface BuildStep {
  exitCode: number | null;
  text: string;
  timedOut: boolean;
}


/**
 * One build step: `sh -c script` (with `env` set) in a build container as `user` (`uid:gid`, default the
 * container's), its output appended to the log. Past `deadline` (epoch ms) the container is killed and the
 * step is `timedOut`. A Docker failure throws a ForesightError naming `what`.
 */
export async function runBuildStep(
  container: Docker.Container,
  script: string,
  env: readonly string[],
  deadline: number,
  append: AppendLog,
  what: string,
  user?: string,
  progress?: StepProgress,
  secretEnv?: readonly string[],
): Promise<BuildStep> {
  const left = deadline - Date.now();
  if (left <= 0) return { exitCode: null, text: '', timedOut: true };
  const beat = stepHeartbeat(progress);
  try {
    // `secretEnv` (a registry token) goes in the exec's own environment, never on its command line.
    const res = await runExec(container, ['env', ...env, 'sh', '-c', script], {
      user,
      ...(secretEnv?.length ? { env: secretEnv } : {}),
      capture: 'combined',
      maxChars: 4 * 1024 * 1024,
      deadlineMs: left,
      onDeadline: async () => {
        await container.kill().catch(() => undefined);
      },
      onOutput: beat.onOutput,
    });
    await append(res.text);
    return { exitCode: res.exitCode, text: res.text, timedOut: res.deadlineHit };
  } catch (err) {
    throw dockerError(what, err);
  } finally {
    beat.stop();
  }
}

/** An install killed by SIGKILL (exit 137) most likely met the build's memory limit: say so under pip's last lines. */
function withKillHint(detail: string, limits: EnvBuildLimits): string {
  if (!/FAILED \(exit 137\)/.test(detail)) return detail;
  return `${detail}\n[foresight] exit 137 is SIGKILL: the build container's memory limit is ${limits.memoryBytes / 1024 / 1024} MiB (EnvImageRequest.limits)`;
}

/** A `docker commit` change: the build container's owner labels must not mark containers of the image as stale. */
export const CLEAR_OWNER_LABELS = `LABEL ${RUN_LABEL}="" ${PID_LABEL}="" ${HOST_LABEL}=""`;

export async function buildEnv(
  docker: Docker,
  req: EnvImageRequest,
  base: BaseImage,
  common: Omit<EnvCommon, 'durationMs'>,
  logPath: string,
  t0: number,
  pipSourcesOf: () => Promise<PipSources>,
  sources?: PackageSources,
): Promise<EnvImageResult> {
  // A library caller's sources were never loaded as secrets: registered here too.
  registerSecret('npm registry token', sources?.npmToken);
  const timeoutSec = req.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC;
  const deadline = t0 + timeoutSec * 1000;
  const limits = envBuildLimits(req.limits);
  const gitDir = await absoluteGitDir(req.gitDir ?? req.clone);
  const pip: PipSources = await pipSourcesOf();
  const apt = aptScript(req.recipe);
  const install = installScript(req.recipe);
  // A Node image: its tools from the host's cache (mounted read-only), its registry reached by the deps step.
  const node: NodeSetup | null = req.recipe.node ? await nodeSetup(req.recipe, sources) : null;
  const nodeBinds = node?.ok ? [`${node.dir}:${NODE_DIST_MOUNT}:ro`, ...node.npm.binds] : [];
  // A Go image whose modules come from the configured proxy: the go deps step, with the network.
  const goDeps = goDepsSetup(req.recipe, sources);
  const depsOnline = node?.ok === true || goDeps !== null;
  const hostConfig = envBuildHostConfig({ limits, apt: apt !== null, network: apt !== null || depsOnline, binds: [`${gitDir}:/src:ro`, ...pip.binds, ...nodeBinds] });
  const header = [
    `# ${common.image}`,
    `# repo ${req.repo} commit ${req.commit}`,
    `# base ${base.image} (${base.id})`,
    `# recipe ${JSON.stringify(buildFields(req.recipe))}`,
    `# dependency files ${common.dependencyFiles.map((f) => `${f.path}@${f.blob.slice(0, 12)}`).join(' ') || '(none)'}`,
    ...pip.notes.map((n) => `# ${n}`),
    `# python ${req.recipe.python === 'auto' ? BASE_PYTHON : req.recipe.python} (Debian ${releaseOf(req.recipe.python)})`,
    ...(node === null ? [] : node.ok ? [`# node ${node.tools.node.version}, ${node.tools.client.pkg} ${node.tools.client.version}`, ...node.npm.notes.map((n) => `# ${n}`)] : [`# node: ${node.reason}`]),
    ...(goDeps?.notes.map((n) => `# ${n}`) ?? []),
    `# limits ${limits.memoryBytes / 1024 / 1024} MiB, ${limits.pidsLimit} pids; capabilities ${hostConfig.CapAdd.join(' ')} (root steps only); install as ${BUILD_USER}`,
    `# started ${new Date().toISOString()}`,
    '',
  ];
  const append = await openBuildLog(logPath, header);
  logLine(req.log, `building ${common.image} for ${req.repo}@${req.commit.slice(0, 12)} (log: ${logPath})`);

  const fail = async (detail: string): Promise<EnvImageResult> => {
    await append(`\n# FAILED after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `${common.image}: install failed (see ${logPath})`);
    return { ok: false, reason: 'env_install_failed', built: false, log: logPath, detail, ...common, durationMs: Date.now() - t0 };
  };

  if (node !== null && !node.ok) return await fail(`error: ${node.reason}`);

  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: base.image,
      Cmd: ['sleep', 'infinity'],
      User: '0:0',
      WorkingDir: '/',
      Labels: {
        ...ownerLabels(),
        [KEY_LABEL]: common.key,
        [REPO_LABEL]: req.repo,
        [COMMIT_LABEL]: req.commit,
        [BASE_LABEL]: base.image,
        [CREATED_LABEL]: new Date().toISOString(),
      },
      NetworkDisabled: hostConfig.NetworkMode === 'none',
      HostConfig: hostConfig,
    });
  } catch (err) {
    throw dockerError(`cannot create the env build container from ${base.image}`, err);
  }
  const dispose = removeOnAbort(docker, container.id, req.signal);
  try {
    try {
      req.signal?.throwIfAborted();
      await container.start();
    } catch (err) {
      throw dockerError('cannot start the env build container', err);
    }
    // Root steps run as the container's user (root); the install and stop steps as BUILD_USER. Each says when
    // it starts, and while it runs a heartbeat says for how long and what it last printed.
    const short = common.image.replace(/^foresight-env:/, 'env ').slice(0, 16);
    const exec = (step: string, script: string, env: string[], user?: string, secretEnv?: readonly string[]): Promise<BuildStep> => {
      logLine(req.log, `${short}: ${step} step (${Math.round((Date.now() - t0) / 1000)} s into the build)`);
      return runBuildStep(container, script, env, deadline, append, 'docker exec in the env build container failed', user, { log: req.log, what: `${short} ${step}` }, secretEnv);
    };
    let online = hostConfig.NetworkMode !== 'none';
    const disconnect = async (): Promise<void> => {
      if (!online) return;
      try {
        await docker.getNetwork('bridge').disconnect({ Container: container.id, Force: true });
      } catch (err) {
        throw dockerError('cannot disconnect the env build container from the network', err);
      }
      online = false;
      await append('# network disconnected\n');
    };

    if (apt !== null) {
      const res = await exec('apt', apt, []);
      if (res.timedOut) return await fail(`timed out after ${timeoutSec} s during apt-get\n${lastLines(res.text)}`);
      if (res.exitCode !== 0) {
        return await fail(`apt-get install ${req.recipe.systemPackages.join(' ')} failed (exit ${res.exitCode})\n${lastLines(res.text)}`);
      }
      // A Node image keeps the network for its deps step, a Go image for its go deps step.
      if (!depsOnline) await disconnect();
    }

    // Nothing of the repository has run yet: a failure here is the image's or Docker's, not the candidate's.
    const prep = await exec('prep', prepScript(req.recipe), []);
    if (prep.timedOut) return await fail(`timed out after ${timeoutSec} s before the install\n${lastLines(prep.text)}`);
    if (prep.exitCode !== 0) {
      throw new ForesightError(`the env build's prep step failed in ${base.image} (exit ${prep.exitCode}): ${lastLines(prep.text).split('\n').pop() ?? ''}`, {
        remedy: `read ${logPath}; the step needs the CHOWN capability (a Docker that ignores --cap-add?)`,
        external: true,
      });
    }

    if (node?.ok) {
      // Node and its client (root's, from the host's cache); a node that does not run here is this candidate's failure.
      const tools = await exec('node', nodeScript(node.tools), []);
      if (tools.timedOut) return await fail(`timed out after ${timeoutSec} s unpacking node\n${lastLines(tools.text)}`);
      if (tools.exitCode !== 0) return await fail(failedStepTail(tools.text));
      // The repository's dependencies, scripts disabled, with the network; then no network for its own code.
      const deps = await exec('deps', depsScript(node.tools), [`FORESIGHT_COMMIT=${req.commit}`], BUILD_USER, node.npm.env);
      if (deps.timedOut) return await fail(`timed out after ${timeoutSec} s during the deps step\n${lastLines(deps.text)}`);
      if (deps.exitCode !== 0) {
        const why = clientError(deps.text);
        return await fail(withKillHint(`${failedStepTail(deps.text)}${why ? `\n${why}` : ''}`, limits));
      }
    }

    if (goDeps !== null) {
      // The modules go.sum names, from the proxy into the module cache; no code of the repository runs.
      const deps = await exec('go deps', goDepsScript(), [`FORESIGHT_COMMIT=${req.commit}`, ...goDeps.env], BUILD_USER, goDeps.secretEnv);
      if (deps.timedOut) return await fail(`timed out after ${timeoutSec} s during the go deps step\n${redact(lastLines(deps.text))}`);
      if (deps.exitCode !== 0) return await fail(withKillHint(redact(failedStepTail(deps.text)), limits));
    }
    // Then no network for the repository's own code.
    await disconnect();

    const res = await exec('install', install, [`FORESIGHT_COMMIT=${req.commit}`, ...pip.env], BUILD_USER);
    if (res.timedOut) return await fail(`timed out after ${timeoutSec} s\n${lastLines(res.text)}`);
    if (res.exitCode !== 0) {
      const hint = /GOPROXY=off/.test(res.text) ? noGoProxyHint(req.recipe, sources) : null;
      return await fail(withKillHint(`${failedStepTail(res.text)}${hint ? `\n${hint}` : ''}`, limits));
    }

    for (const [script, user, what] of [
      [STOP_SCRIPT, BUILD_USER, 'stop'],
      [finishScript(req.recipe), undefined, 'finish'],
    ] as const) {
      const step = await exec(what, script, [], user);
      if (step.timedOut) return await fail(`timed out after ${timeoutSec} s after the install\n${lastLines(step.text)}`);
      if (step.exitCode !== 0) return await fail(`the build's ${what} step failed (exit ${step.exitCode})\n${lastLines(step.text)}`);
    }

    const { repo, tag } = splitRef(common.image);
    logLine(req.log, `${short}: docker commit`);
    const committing = stepHeartbeat({ log: req.log, what: `${short} docker commit` });
    try {
      await container.commit({
        repo,
        tag,
        comment: `foresight env for ${req.repo}@${req.commit}`,
        changes: [
          `ENV FORESIGHT_PYTHON=${VENV_PYTHON} VIRTUAL_ENV=${VENV} PATH=${IMAGE_PATH}`,
          ...(req.recipe.go ? [`ENV ${Object.entries(GO_ENV).map(([k, v]) => `${k}=${v}`).join(' ')} FORESIGHT_GOCACHE_SEED=${GO_DIR}/cache`] : []),
          // Node first on PATH, the venv's python still there for the harness scripts.
          ...(req.recipe.node ? [`ENV PATH=${NODE_DIR}/bin:${IMAGE_PATH} FORESIGHT_NODE_MODULES=${NODE_MODULES}`] : []),
          'WORKDIR /tmp',
          CLEAR_OWNER_LABELS,
        ],
      });
    } catch (err) {
      throw dockerError(`cannot commit ${common.image}`, err);
    } finally {
      committing.stop();
    }
    await append(`\n# committed ${common.image} after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `built ${common.image} in ${Math.round((Date.now() - t0) / 1000)} s`);
    return { ok: true, built: true, log: logPath, ...common, durationMs: Date.now() - t0 };
  } finally {
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
  }
}
