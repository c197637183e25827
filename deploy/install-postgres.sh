#!/usr/bin/env bash
# Installs PostgreSQL's server binaries (initdb, pg_ctl, postgres) from Debian's packages
# when they are missing: the archive's tests and `mighty bench archive` start a private
# server with them (services/archive/runtime.py). Debian puts them in
# /usr/lib/postgresql/<version>/bin, off the PATH; the runtime looks there too.
set -euo pipefail
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then exit 0; fi
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then exit 0; fi
echo "installing postgresql from Debian's packages"
SUDO=$( [ "$(id -u)" = 0 ] || echo sudo )
$SUDO apt-get update -qq
# the package's post-install step would create and start a cluster of its own: not wanted
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
# initdb refuses to run as root; under root the tests run the server as `postgres`
# (made by the package) or `nobody`, through runuser (util-linux)
command -v runuser >/dev/null || echo "warning: runuser is missing; a root run cannot start PostgreSQL" >&2
