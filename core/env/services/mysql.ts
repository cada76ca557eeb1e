/** MariaDB (Debian's MySQL) in a sidecar: a user `foresight` with every privilege, reached as `db:3306`. */
import { SERVICE_DB, SERVICE_HOST, SERVICE_PASSWORD, SERVICE_USER, type ServiceSpec } from './types.ts';

const DATA = '/var/lib/foresight-mysql';

/** The data directory and the user are made at build time (bootstrap mode, no server left running). */
const SETUP = String.raw`set -eu
install -d -o mysql -g mysql ${DATA}
mariadb-install-db --user=mysql --datadir=${DATA} --skip-test-db --auth-root-authentication-method=socket >/dev/null
printf '%s\n' "FLUSH PRIVILEGES;" "CREATE USER '${SERVICE_USER}'@'%' IDENTIFIED BY '${SERVICE_PASSWORD}';" "GRANT ALL PRIVILEGES ON *.* TO '${SERVICE_USER}'@'%' WITH GRANT OPTION;" "CREATE DATABASE ${SERVICE_DB};" \
  | mariadbd --bootstrap --user=mysql --datadir=${DATA} --skip-grant-tables=0 >/dev/null 2>&1 \
  || { echo 'mariadbd --bootstrap failed' >&2; exit 1; }`;

const DJANGO = [
  '# Written by foresight: Django test settings for the MariaDB sidecar (PyMySQL stands in for mysqlclient).',
  'import pymysql',
  '',
  'pymysql.install_as_MySQLdb()',
  'from test_sqlite import *  # noqa: E402,F401,F403 (the era\'s own test settings)',
  '',
  'def _db(name):',
  `    return {"ENGINE": "django.db.backends.mysql", "NAME": name, "USER": "${SERVICE_USER}", "PASSWORD": "${SERVICE_PASSWORD}", "HOST": "${SERVICE_HOST}", "PORT": "3306"}`,
  '',
  '',
  `DATABASES = {"default": _db("${SERVICE_DB}"), "other": _db("${SERVICE_DB}_other")}`,
  '',
].join('\n');

export const mysql: ServiceSpec = {
  kind: 'service',
  name: 'mysql',
  packages: ['mariadb-server'],
  setup: SETUP,
  user: 'mysql',
  cmd: ['mariadbd', `--datadir=${DATA}`, '--bind-address=0.0.0.0', '--port=3306', '--socket=/tmp/mysqld.sock', '--pid-file=/tmp/mysqld.pid', '--skip-log-bin', '--innodb-flush-log-at-trx-commit=0', '--character-set-server=utf8mb4'],
  ready: ['mariadb-admin', '--protocol=tcp', '-h', '127.0.0.1', '-P', '3306', `-u${SERVICE_USER}`, `-p${SERVICE_PASSWORD}`, 'ping'],
  port: 3306,
  // No mysqlclient among the offline wheels: PyMySQL, which Django takes through install_as_MySQLdb.
  // 1.0+ first: bullseye's python3-pymysql 0.9.3 (seen by the 3.9 venv) poses as mysqlclient 1.3.12,
  // which Django 3.1+ rejects ("mysqlclient 1.4.0 or newer is required").
  drivers: ['PyMySQL>=1.0', 'PyMySQL'],
  env: {
    FORESIGHT_DB: 'mysql',
    FORESIGHT_DB_HOST: SERVICE_HOST,
    FORESIGHT_DB_PORT: '3306',
    FORESIGHT_DB_USER: SERVICE_USER,
    FORESIGHT_DB_PASSWORD: SERVICE_PASSWORD,
    FORESIGHT_DB_NAME: SERVICE_DB,
    FORESIGHT_DJANGO_SETTINGS: 'foresight_mysql',
  },
  settings: { 'foresight_mysql.py': DJANGO },
};
