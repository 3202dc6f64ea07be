"""A real OpenSSH server on 127.0.0.1 standing in for a GPU node, for probe tests.

Each node is its own sshd on a free port with a throwaway host key, a throwaway client key in
the user's authorized_keys (no passwords, no PAM), and a PATH whose `nvidia-smi` is the fake in
tests/fakes/ replaying the shared H200 captures. A node's environment (FAKE_NVIDIA_SMI_HANG,
FAKE_NVIDIA_SMI_FAIL, another capture folder) is set for its sessions with sshd's SetEnv.

Needs openssh-server (Debian: `apt-get install openssh-server`) and root, to make the user.
"""

import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAKE_SMI = REPO / "tests" / "fakes" / "nvidia-smi"
H200 = REPO.parent / "shared" / "fixtures" / "gpu" / "h200"
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
USER = "wbprobe"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def keygen(path: Path, kind: str = "ed25519") -> str:
    """A fresh key pair at `path`; returns the public key line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "workbench-test", "-f", str(path)],
        check=True,
    )
    return Path(f"{path}.pub").read_text().strip()


def ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        done = subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/sh", USER],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0, 9):  # 9: made meanwhile by a test process beside this one
            raise RuntimeError(f"useradd {USER} failed: {done.stderr.strip()}") from None
        # A fresh account is locked ("!"), which sshd refuses without PAM.
        subprocess.run(["usermod", "-p", "*", USER], check=True)
        return pwd.getpwnam(USER)


@dataclass
class SshNode:
    """One running sshd: where it listens, its host key, and the client key it accepts."""

    port: int
    host_key: str  # the OpenSSH public key line of the server
    client_key: str  # the private key (OpenSSH PEM) the server accepts
    directory: Path
    process: subprocess.Popen
    env: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> str:
        path = self.directory / "sshd.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def new_host_key(self) -> str:
        """Restart with another host key (as after a reinstall or a man in the middle)."""
        self.stop()
        for name in ("host_ed25519", "host_ed25519.pub"):
            (self.directory / name).unlink()
        self.host_key = keygen(self.directory / "host_ed25519")
        self.process = _start(self.directory, self.port)
        return self.host_key


def _start(directory: Path, port: int) -> subprocess.Popen:
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(directory / "sshd_config"), "-E", str(directory / "sshd.log")]
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {(directory / 'sshd.log').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                if sock.recv(4).startswith(b"SSH-"):
                    return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("sshd did not start listening in 10 s")


def start_node(
    directory: Path, client: Path | None = None, *, extra_config: str = "", **env: str
) -> SshNode:
    """Start one node under `directory` (made here) accepting the key pair at `client` (a new
    one when None); `env` is set for its SSH sessions, `extra_config` ends its sshd_config (a
    ForceCommand, say)."""
    user = ensure_user()
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o755)
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    # Copies, not links: the node's user may not be able to reach the checkout or shared/.
    shutil.copy(FAKE_SMI, bin_dir / "nvidia-smi")
    (bin_dir / "nvidia-smi").chmod(0o755)
    captures = directory / "captures"
    if not captures.exists():
        shutil.copytree(H200, captures)
    (bin_dir / "dmesg").write_text(
        "#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n"
    )
    (bin_dir / "dmesg").chmod(0o755)
    host_key = keygen(directory / "host_ed25519")
    if client is None:
        client = directory / "client_ed25519"
        client_pub = keygen(client)
    else:
        client_pub = Path(f"{client}.pub").read_text().strip()
    auth = directory / "authorized_keys"
    auth.write_text(client_pub + "\n")
    os.chown(auth, user.pw_uid, user.pw_gid)
    auth.chmod(0o600)
    port = free_port()
    session_env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "FAKE_NVIDIA_SMI_DIR": str(captures),
        **env,
    }
    setenv = " ".join(f'"{k}={v}"' for k, v in session_env.items())
    (directory / "sshd_config").write_text(
        f"""ListenAddress 127.0.0.1
Port {port}
HostKey {directory / "host_ed25519"}
PidFile {directory / "sshd.pid"}
AuthorizedKeysFile {auth}
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin no
AllowUsers {USER}
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
SetEnv {setenv}
LogLevel VERBOSE
{extra_config}"""
    )
    process = _start(directory, port)
    return SshNode(
        port=port,
        host_key=host_key,
        client_key=client.read_text(),
        directory=directory,
        process=process,
        env=session_env,
    )
