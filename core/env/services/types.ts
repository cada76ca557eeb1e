/** A database backend the tests may run against: none (SQLite, in-process) or a service in a sidecar container. */

/** The host name of the sidecar on the chain's internal network. */
export const SERVICE_HOST = 'db';
/** Credentials of the sidecar's database superuser (an internal network reaches it: nothing secret). */
export const SERVICE_USER = 'foresight';
export const SERVICE_PASSWORD = 'foresight';
export const SERVICE_DB = 'foresight';
/** Where an env image keeps the backend's settings modules (outside the work tree: checkout.sh cleans it). */
export const SETTINGS_DIR = '/opt/foresight-db';

export interface ServiceSpec {
  kind: 'service';
  name: string;
  /** Debian packages of the service image (installed over the default base image, with Debian's mirror). */
  packages: readonly string[];
  /** Run as root after the packages at build time: initialise the data directory, the users. */
  setup: string;
  /** The sidecar's user and command (the data directory is the image's). */
  user: string;
  cmd: readonly string[];
  /** Exec'd in the sidecar: exits 0 once the service accepts connections from the network. */
  ready: readonly string[];
  port: number;
  /** pip requirements of the Python driver, tried in order until one installs (in the env image). */
  drivers: readonly string[];
  /** Environment of the test runs (FORESIGHT_DB and the connection; PYTHONPATH gains SETTINGS_DIR). */
  env: Readonly<Record<string, string>>;
  /** Python modules written into SETTINGS_DIR of the env image (Django's settings for this backend). */
  settings: Readonly<Record<string, string>>;
}

/** A backend with no service: the tests' own in-process database (SQLite), the default. */
export interface NoService {
  kind: 'none';
  name: string;
}

export type Backend = NoService | ServiceSpec;
