/** Where the Docker daemon is and how to talk to it. */
import Docker from 'dockerode';

const DEFAULT_SOCKET = '/var/run/docker.sock';

/** Where the daemon is expected: DOCKER_HOST (unix://… or other), else the default socket. */
export function dockerEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  const host = env['DOCKER_HOST'];
  if (!host) return DEFAULT_SOCKET;
  return host.startsWith('unix://') ? host.slice('unix://'.length) : host;
}

/** A Dockerode client. The API version is not pinned: requests use the daemon's own version. */
export function connectDocker(env: NodeJS.ProcessEnv = process.env): Docker {
  const host = env['DOCKER_HOST'];
  if (!host || host.startsWith('unix://')) return new Docker({ socketPath: dockerEndpoint(env) });
  return new Docker(); // tcp:// / ssh:// — dockerode reads DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH
}

