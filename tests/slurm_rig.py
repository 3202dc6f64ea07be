"""A real single-node Slurm 22.05 with eight declared H200 GPUs, brought up for tests in a temp dir.

`slurm_rig()` starts, in a fresh temporary directory and on ports picked free at run time:

- its own `munged` (own key, own socket), so that tests sharing the machine never touch a
  system one;
- `slurmctld` and `slurmd` (node `localhost`, `Gres=gpu:h200:8`, one default partition `gpu`),
  both in the foreground so that teardown owns them;
- `slurmrestd` on 127.0.0.1 as an ordinary user with JWT authentication.

`SlurmRig.token(user)` mints a JWT with `scontrol token`, `SlurmRig.run(...)` runs a Slurm
command against this cluster (optionally as an ordinary user). `stop()` kills every process
it started, also when start-up failed half-way, and removes the directory.

Obstacles met, and how this module gets past each (see docs/platform-notes.md):

- Debian ships `auth_jwt.so` / `rest_auth_jwt.so` in a package of their own,
  `slurm-wlm-jwt-plugin`: without it slurmctld dies at start ("cannot find auth plugin for
  auth/jwt"). `start_rig` says so before starting anything.
- Nothing on this machine runs munged, and `slurm.conf`'s `AuthInfo=socket=` is what points
  slurmctld, slurmd and every command at the rig's own one.
- Slurm drops GPUs that have no device file ("Removing file-less GPU") and refuses plain files,
  so `gres.conf` points `File=` at character devices made with `mknod` (major 1, minor 3: the
  same device as /dev/null) inside the temp dir; `AutoDetect=off` keeps NVML out of it.
- `Gres=` in slurm.conf must agree with gres.conf or the node comes up with `Gres=(null)`;
  both are written from the same constants here.
- slurmrestd refuses to run as root or as SlurmUser: it is started with `-u` an ordinary user
  (created with useradd when missing), and only the `openapi/v0.0.3x` plugins are loaded: the
  `dbv0.0.3x` ones need slurmdbd and make it exit. `SLURM_JWT=daemon` makes it pass each
  request's own token to slurmctld, which checks it with `AuthAltTypes=auth/jwt`.
- Tokens are minted for a second ordinary user, who also submits the test jobs (root jobs are
  not what a cluster user sees).
- `RealMemory` and `CPUs` are kept at or below what the machine has; otherwise slurmd registers
  and the controller drains the node ("Low RealMemory"). A node that still comes up drained or
  down is resumed while readiness is polled.
- GPU counts in TRES accounting need slurmdbd; they are left out.
- Job steps outlive slurmd: `slurmstepd` runs in a session of its own, reparented to init. So
  `stop()` cancels every job first, then kills the daemons' process groups, then kills any
  process left whose environment holds this rig's SLURM_CONF or whose cwd is inside the rig.
  (On this machine init does not reap, so killed steps linger as zombies: harmless.)

Readiness is polled with deadlines; on failure `RigError` carries the tails of every log.
The tests skip only where the Slurm binaries are missing (`missing_binaries()`).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BINARIES = ("munged", "slurmctld", "slurmd", "slurmrestd", "scontrol", "sinfo", "sbatch")
REST_USER = "wbslurmrest"  # runs slurmrestd
JOB_USER = "wbslurmuser"  # holds the tokens and submits the jobs
NODE = "localhost"
GPU_TYPE = "h200"
GPU_COUNT = 8
PARTITION = "gpu"
REST_PLUGINS = "openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38"
START_TIMEOUT = 60.0


class RigError(RuntimeError):
    """The rig could not start; the message holds the daemons' log tails."""


def missing_binaries() -> list[str]:
    """The Slurm and munge programs this rig needs that are not installed."""
    return [name for name in BINARIES if _which(name) is None]


def missing_plugins() -> list[str]:
    """Slurm plugins the rig needs that are absent next to auth_munge.so (Debian splits the
    JWT ones into slurm-wlm-jwt-plugin); empty where the plugin directory is not found."""
    found = sorted(Path("/usr/lib").glob("*/slurm*/auth_munge.so"))
    found += sorted(Path("/usr/lib").glob("slurm*/auth_munge.so"))
    if not found:
        return []
    plugin_dir = found[0].parent
    return [
        name for name in ("auth_jwt.so", "rest_auth_jwt.so") if not (plugin_dir / name).exists()
    ]


def _which(name: str) -> str | None:
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    return shutil.which(name, path=path)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_user(name: str) -> pwd.struct_passwd:
    """The account `name`, created (no home, no login shell) when it does not exist."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    done = subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 9):  # 9: created meanwhile by a concurrent run
        raise RigError(f"useradd {name} failed: {done.stderr.strip()}")
    return pwd.getpwnam(name)


@dataclass
class SlurmRig:
    """One running cluster: where it lives, its ports, and the processes to stop."""

    root: Path
    ctld_port: int
    slurmd_port: int
    rest_port: int
    rest_user: str = REST_USER
    job_user: str = JOB_USER
    node: str = NODE
    partition: str = PARTITION
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "munge.sock"

    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def env(self) -> dict[str, str]:
        """The environment Slurm's commands need to talk to this cluster."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env.pop("SLURM_JWT", None)
        return env

    def run(
        self, args: Sequence[str], *, user: str | None = None, timeout: float = 30.0
    ) -> subprocess.CompletedProcess[str]:
        """Run a Slurm command against this cluster, as root or as `user`."""
        command = list(args)
        if user is not None:
            command = ["runuser", "-u", user, "--", *command]
        return subprocess.run(
            command,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd="/tmp",
            check=False,
        )

    def shell(
        self, line: str, *, user: str | None = None, timeout: float = 30.0
    ) -> subprocess.CompletedProcess[str]:
        """Run a command line through /bin/sh, as an SSH connector's remote shell would."""
        return self.run(["/bin/sh", "-c", line], user=user, timeout=timeout)

    def token(self, username: str | None = None, lifespan: int = 900) -> str:
        """A JWT for `username` (the job user by default) from `scontrol token`."""
        user = username or self.job_user
        done = self.run(["scontrol", "token", f"username={user}", f"lifespan={lifespan}"])
        out = done.stdout.strip()
        if done.returncode != 0 or not out.startswith("SLURM_JWT="):
            raise RigError(f"scontrol token failed: {done.stderr.strip() or out}")
        return out.removeprefix("SLURM_JWT=")

    def log_tails(self, lines: int = 15) -> str:
        """The last lines of every log the rig writes, for failure messages."""
        parts = []
        for log in sorted((self.root / "log").glob("*.log")):
            try:
                text = log.read_text(errors="replace").splitlines()[-lines:]
            except OSError as exc:
                text = [f"(unreadable: {exc})"]
            parts.append(f"--- {log.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel the cluster's jobs, kill every process the rig started, remove the dir."""
        if self.processes.get("slurmctld") and self.processes["slurmctld"].poll() is None:
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                jobs = self.run(["squeue", "-h", "-o", "%i"], timeout=10).stdout.split()
                if jobs:
                    self.run(["scancel", *jobs], timeout=10)
        for proc in self.processes.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for proc in self.processes.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        self.processes.clear()
        self._kill_leftovers()
        shutil.rmtree(self.root, ignore_errors=True)

    def _kill_leftovers(self) -> None:
        """slurmstepd and job processes live in sessions of their own and outlive slurmd: find
        them by this cluster's SLURM_CONF in their environment or a cwd inside the rig."""
        marker = f"SLURM_CONF={self.conf}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if marker in environ or Path(cwd).is_relative_to(self.root):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)

    # --- start-up -----------------------------------------------------------------------

    def _spawn(self, name: str, args: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        log = open(self.root / "log" / f"{name}.out.log", "wb")  # noqa: SIM115 - child owns it
        try:
            self.processes[name] = subprocess.Popen(
                list(args),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env or self.env(),
                cwd=self.root,
                start_new_session=True,
            )
        finally:
            log.close()

    def _fail(self, what: str) -> RigError:
        dead = [
            f"{name} exited with {proc.returncode}"
            for name, proc in self.processes.items()
            if proc.poll() is not None
        ]
        return RigError(f"{what}; {', '.join(dead) or 'all daemons alive'}\n{self.log_tails()}")

    def _wait(self, what: str, ready: Callable[[], bool], deadline: float) -> None:
        while True:
            for name, proc in self.processes.items():
                if proc.poll() is not None:
                    raise self._fail(f"{name} died while waiting for {what}")
            if ready():
                return
            if time.monotonic() > deadline:
                raise self._fail(f"timed out waiting for {what}")
            time.sleep(0.2)

    def _write_files(self) -> None:
        for sub in ("etc", "munge", "state", "spool", "log", "dev", "run"):
            (self.root / sub).mkdir(mode=0o755)
        os.chmod(self.root, 0o755)  # slurmrestd and the job user read the configuration
        os.chmod(self.root / "state", 0o700)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        jwt = self.root / "state" / "jwt.key"
        jwt.write_bytes(secrets.token_bytes(32))
        jwt.chmod(0o600)
        for i in range(GPU_COUNT):
            os.mknod(self.root / "dev" / f"nvidia{i}", 0o666 | 0o020000, os.makedev(1, 3))
        memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        cpus = os.cpu_count() or 1
        d = self.root
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=wbrig",
                    f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
                    f"SlurmctldPort={self.ctld_port}",
                    f"SlurmdPort={self.slurmd_port}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={self.munge_socket}",
                    "AuthAltTypes=auth/jwt",
                    f"AuthAltParameters=jwt_key={jwt}",
                    f"StateSaveLocation={d / 'state'}",
                    f"SlurmdSpoolDir={d / 'spool'}",
                    f"SlurmctldPidFile={d / 'run' / 'slurmctld.pid'}",
                    f"SlurmdPidFile={d / 'run' / 'slurmd.pid'}",
                    f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={d / 'log' / 'slurmd.log'}",
                    "SlurmctldDebug=info",
                    "SlurmdDebug=info",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "AccountingStorageType=accounting_storage/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "JobCompType=jobcomp/none",
                    "MpiDefault=none",
                    "SwitchType=switch/none",
                    "MailProg=/bin/true",
                    "ReturnToService=2",
                    "SchedulerType=sched/backfill",
                    "GresTypes=gpu",
                    f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} "
                    f"RealMemory={min(4000, memory_mb // 2)} "
                    f"Gres=gpu:{GPU_TYPE}:{GPU_COUNT} State=UNKNOWN",
                    f"PartitionName={self.partition} Nodes={self.node} Default=YES "
                    "MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        (self.root / "etc" / "gres.conf").write_text(
            "AutoDetect=off\n"
            f"NodeName={self.node} Name=gpu Type={GPU_TYPE} "
            f"File={d / 'dev'}/nvidia[0-{GPU_COUNT - 1}]\n"
        )

    def _start(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        ensure_user(self.rest_user)
        ensure_user(self.job_user)
        self._write_files()
        m = self.root / "munge"
        self._spawn(
            "munged",
            [
                _need("munged"),
                "--foreground",
                "--force",
                f"--socket={self.munge_socket}",
                f"--key-file={m / 'munge.key'}",
                f"--pid-file={m / 'munged.pid'}",
                f"--seed-file={m / 'munged.seed'}",
                f"--log-file={self.root / 'log' / 'munged.log'}",
            ],
        )
        self._wait("munged's socket", self.munge_socket.exists, deadline)
        self._spawn("slurmctld", [_need("slurmctld"), "-D", "-f", str(self.conf)])
        self._wait("slurmctld", self._ctld_up, deadline)
        self._spawn("slurmd", [_need("slurmd"), "-D", "-f", str(self.conf), "-N", self.node])
        self._wait("the node to register with its GPUs", self._node_ready, deadline)
        rest_env = self.env()
        rest_env["SLURM_JWT"] = "daemon"
        self._spawn(
            "slurmrestd",
            [
                _need("slurmrestd"),
                "-f",
                str(self.conf),
                "-u",
                self.rest_user,
                "-a",
                "rest_auth/jwt",
                "-s",
                REST_PLUGINS,
                f"127.0.0.1:{self.rest_port}",
            ],
            env=rest_env,
        )
        token = self.token()
        self._wait("slurmrestd to answer ping", lambda: self._rest_up(token), deadline)

    def _ctld_up(self) -> bool:
        done = self.run(["scontrol", "ping"], timeout=10)
        return "is UP" in done.stdout

    def _node_ready(self) -> bool:
        done = self.run(["sinfo", "-h", "-N", "-n", self.node, "-o", "%T|%G"], timeout=10)
        state, _, gres = done.stdout.strip().partition("|")
        state = state.rstrip("*~#$@^-!%")
        if state in ("idle", "mixed", "allocated") and gres.startswith(f"gpu:{GPU_TYPE}:"):
            return True
        if state.startswith(("drain", "down")):
            self.run(["scontrol", "update", f"nodename={self.node}", "state=resume"], timeout=10)
        return False

    def _rest_up(self, token: str) -> bool:
        request = urllib.request.Request(
            f"{self.rest_url}/slurm/v0.0.38/ping",
            headers={"X-SLURM-USER-NAME": self.job_user, "X-SLURM-USER-TOKEN": token},
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False


def _need(name: str) -> str:
    path = _which(name)
    if path is None:
        raise RigError(f"{name} is not installed (apt-get install slurm-wlm slurmrestd munge)")
    return path


def start_rig() -> SlurmRig:
    """Start a cluster in a new temp dir; on any failure stop what started, then raise."""
    missing = missing_binaries()
    if missing:
        raise RigError(f"not installed: {', '.join(missing)}")
    if os.geteuid() != 0:
        raise RigError("the Slurm rig needs root: mknod, SlurmUser=root, slurmrestd -u USER")
    plugins = missing_plugins()
    if plugins:
        raise RigError(
            f"Slurm plugins missing: {', '.join(plugins)} (apt-get install slurm-wlm-jwt-plugin)"
        )
    ports: set[int] = set()
    while len(ports) < 3:
        ports.add(_free_port())
    ctld, slurmd, rest = sorted(ports)
    rig = SlurmRig(
        root=Path(tempfile.mkdtemp(prefix="wb-slurm-")),
        ctld_port=ctld,
        slurmd_port=slurmd,
        rest_port=rest,
    )
    try:
        rig._start()
    except BaseException:
        rig.stop()
        raise
    return rig


@contextlib.contextmanager
def slurm_rig() -> Iterator[SlurmRig]:
    """A running cluster for the duration of the block, stopped afterwards whatever happens."""
    rig = start_rig()
    try:
        yield rig
    finally:
        rig.stop()
