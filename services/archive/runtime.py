"""A private PostgreSQL server: ``initdb`` in a temp dir, ``pg_ctl start`` on a free
port of 127.0.0.1 with its unix socket in the same dir, stopped by ``stop()``. For the
tests and ``mighty bench archive``; production points ``MIGHTY_ARCHIVE_URL`` at its own.

Finding the binaries: ``initdb`` and ``pg_ctl`` on the PATH, else the newest
``/usr/lib/postgresql/<version>/bin`` (where Debian's ``postgresql`` package puts them
without linking them onto the PATH). ``deploy/install-postgres.sh`` installs the package.

Running as root: ``initdb`` and ``postgres`` refuse to run as root (a server must not own
the machine). Under root the server runs as the ``postgres`` user (made by Debian's
package), else ``nobody``, through ``runuser``; its directory is made in the system temp
dir (not under a root-only pytest dir the user could not enter) and handed to it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from services.redis_runtime import free_port
from services.settings import settings_from

_SUPERUSER = "mighty"


class PostgresMissing(RuntimeError):
    """No PostgreSQL binaries here: install Debian's ``postgresql`` package
    (``deploy/install-postgres.sh``)."""


def postgres_bin() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parts[3]) if Path(p).parts[3].isdigit() else 0)
    if candidates:
        return Path(candidates[-1]).parent
    raise PostgresMissing("initdb is not on the PATH nor in /usr/lib/postgresql/*/bin: "
                          "install PostgreSQL (bash deploy/install-postgres.sh)")


def _server_user() -> str | None:
    """The user to run the server as: None when not root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise PostgresMissing("running as root and there is neither a postgres nor a nobody user to run the server as")


@dataclass
class PrivatePostgres:
    root: Path
    port: int
    bin: Path
    user: str | None

    @property
    def socket_dir(self) -> Path:
        return self.root

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / argv[0]), *argv[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, stdin=subprocess.DEVNULL,
                              timeout=120)

    def start(self) -> None:
        # fsync off: a test server need not survive an OS crash, only a killed server; so
        # commits still wait for their WAL write (synchronous_commit stays on): a commit
        # acknowledged before an immediate stop is there after the restart
        options = (f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c full_page_writes=off")
        done = self._run("pg_ctl", "start", "-w", "-t", "60", "-D", str(self.root / "data"),
                         "-l", str(self.root / "server.log"), "-o", options, check=False)
        if done.returncode != 0:
            log = (self.root / "server.log").read_text() if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr or done.stdout}\n{log[-2000:]}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "stop", "-w", "-m", mode, "-D", str(self.root / "data"), check=False)

    def running(self) -> bool:
        return self._run("pg_ctl", "status", "-D", str(self.root / "data"), check=False).returncode == 0

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def start_private_postgres(port: int | None = None) -> PrivatePostgres:
    """A fresh cluster (trust authentication for the superuser ``mighty`` on 127.0.0.1
    and the socket only: nobody else can reach it), started; ``stop()`` and ``remove()``
    after use."""
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="mighty-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = PrivatePostgres(root, port or free_port(), postgres_bin(), user)
    done = server._run("initdb", "-D", str(root / "data"), "-U", _SUPERUSER, "--auth=trust",
                       "--no-sync", "-E", "UTF8", "--locale=C", check=False)
    if done.returncode != 0:
        server.remove()
        raise RuntimeError(f"initdb failed: {done.stderr or done.stdout}")
    try:
        server.start()
    except Exception:
        server.remove()
        raise
    return server


def archive_url_for_run(stack: contextlib.ExitStack) -> str:
    """``MIGHTY_ARCHIVE_URL`` when set; else a private server (``start_private_postgres``),
    stopped and removed when ``stack`` closes (the benchmarks use this)."""
    url = settings_from().archive_url
    if url is not None:
        return url
    server = start_private_postgres()
    stack.callback(server.remove)
    stack.callback(server.stop, "immediate")
    return server.url()
