/** Where the Docker daemon is and how to talk to it. */
import Docker from 'dockerode';

const DEFAULT_SOCKET = '/var/run/docker.sock';

/** Where the daemon is expected: `host` (config docker.host, i.e. DOCKER_HOST: unix://… or tcp://…), else the default socket. */
export function dockerEndpoint(host: string | null = null): string {
  if (!host) return DEFAULT_SOCKET;
  return host.startsWith('unix://') ? host.slice('unix://'.length) : host;
}

/** A Dockerode client for `host` (null: the default socket). The API version is not pinned: requests use the daemon's own. */
export function connectDocker(host: string | null = null): Docker {
  if (!host || host.startsWith('unix://')) return new Docker({ socketPath: dockerEndpoint(host) });
  const url = new URL(host.replace(/^tcp:/, 'http:'));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: url.protocol === 'https:' ? 'https' : 'http' });
}
