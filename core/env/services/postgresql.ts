/** PostgreSQL (and PostGIS) from Debian's packages, in a sidecar: a superuser `foresight` reached as `db:5432`. */
import { SERVICE_DB, SERVICE_HOST, SERVICE_PASSWORD, SERVICE_USER, type ServiceSpec } from './types.ts';

/** A stable path to the release's PostgreSQL binaries (/usr/lib/postgresql/<major>/bin). */
const PGBIN = '/usr/local/lib/foresight-pgbin';
const DATA = '/var/lib/foresight-pg';

/** initdb at build time: the sidecar starts in about a second; password logins from the network only. */
const SETUP = String.raw`set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
ln -sfn "$bin" ${PGBIN}
install -d -o postgres -g postgres ${DATA}
printf '%s\n' '${SERVICE_PASSWORD}' >/tmp/pw && chown postgres /tmp/pw
su postgres -s /bin/sh -c "${PGBIN}/initdb -D ${DATA} -U ${SERVICE_USER} --pwfile=/tmp/pw -E UTF8 --locale=C --auth-local=trust --auth-host=scram-sha-256"
rm -f /tmp/pw
echo 'CREATE DATABASE ${SERVICE_DB};' | su postgres -s /bin/sh -c "${PGBIN}/postgres --single -D ${DATA} postgres" >/dev/null
echo 'host all all 0.0.0.0/0 scram-sha-256' >>${DATA}/pg_hba.conf
echo 'host all all ::/0 scram-sha-256' >>${DATA}/pg_hba.conf`;

/** Django's test settings on this backend: the era's own test_sqlite settings with the databases replaced. */
function djangoSettings(engine: string): string {
  const db = (name: string): string =>
    `{"ENGINE": "${engine}", "NAME": "${name}", "USER": "${SERVICE_USER}", "PASSWORD": "${SERVICE_PASSWORD}", "HOST": "${SERVICE_HOST}", "PORT": "5432"}`;
  return [
    '# Written by foresight: Django test settings for the database sidecar.',
    'from test_sqlite import *  # noqa: F401,F403 (the era\'s own test settings)',
    '',
    `DATABASES = {"default": ${db(SERVICE_DB)}, "other": ${db(`${SERVICE_DB}_other`)}}`,
    '',
  ].join('\n');
}

function spec(name: 'postgresql' | 'postgis', packages: readonly string[], engine: string): ServiceSpec {
  return {
    kind: 'service',
    name,
    packages,
    setup: SETUP,
    user: 'postgres',
    // Durability is worth nothing for a test database: no fsync.
    cmd: [`${PGBIN}/postgres`, '-D', DATA, '-c', 'listen_addresses=*', '-c', 'unix_socket_directories=/tmp', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    ready: [`${PGBIN}/pg_isready`, '-q', '-h', '127.0.0.1', '-p', '5432', '-U', SERVICE_USER],
    port: 5432,
    drivers: ['psycopg2-binary', 'psycopg[binary]', 'psycopg'],
    env: {
      FORESIGHT_DB: name,
      FORESIGHT_DB_HOST: SERVICE_HOST,
      FORESIGHT_DB_PORT: '5432',
      FORESIGHT_DB_USER: SERVICE_USER,
      FORESIGHT_DB_PASSWORD: SERVICE_PASSWORD,
      FORESIGHT_DB_NAME: SERVICE_DB,
      // libpq's own variables: psycopg connects with no arguments.
      PGHOST: SERVICE_HOST,
      PGPORT: '5432',
      PGUSER: SERVICE_USER,
      PGPASSWORD: SERVICE_PASSWORD,
      PGDATABASE: SERVICE_DB,
      FORESIGHT_DJANGO_SETTINGS: `foresight_${name}`,
    },
    settings: { [`foresight_${name}.py`]: djangoSettings(engine) },
  };
}

export const postgresql: ServiceSpec = spec('postgresql', ['postgresql'], 'django.db.backends.postgresql');
/** PostGIS: PostgreSQL with the postgis extension available (Django creates it in its test database). */
export const postgis: ServiceSpec = spec('postgis', ['postgresql', 'postgresql-postgis'], 'django.contrib.gis.db.backends.postgis');
