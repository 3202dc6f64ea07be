"""deploy/tools/venv.sh, which `make run` and `make test` install through: one line for a Python
that is too old or has no venv module, and pip when uv fails."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "tools" / "venv.sh"


def fake(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def venv_sh(tmp_path: Path, python: str, *locks: str, path: str | None = None):
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    return subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "venv"), python, *locks],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_an_older_python_gets_one_line_naming_the_version_and_the_way_out(tmp_path: Path) -> None:
    # An interpreter as Python 3.11 answers: its version, and False to "3.12 or newer?".
    old = fake(
        tmp_path,
        "python3.11",
        'case "$1" in --version) echo "Python 3.11.2";; -c) exit 1;; *) exit 2;; esac\n',
    )
    done = venv_sh(tmp_path, str(old), "requirements-dev.lock")
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "Python 3.11.2" in line and "Python 3.12 or newer" in line
    assert "make run PYTHON=/path/to/python3.12" in line
    assert not (tmp_path / "venv").exists()


def test_no_python_at_all_says_what_to_install(tmp_path: Path) -> None:
    done = venv_sh(tmp_path, "", "requirements-dev.lock")
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "no Python 3.12 or newer found" in line and "PYTHON=" in line


def test_a_python_without_venv_names_the_debian_package(tmp_path: Path) -> None:
    # Debian's python3 without python3-venv: new enough, but `-m venv` fails on ensurepip.
    no_venv = fake(
        tmp_path,
        "python3",
        'if [ "$1" = "-m" ]; then echo "The virtual environment was not created successfully '
        'because ensurepip is not available." >&2; exit 1; fi\nexit 0\n',
    )
    done = venv_sh(
        tmp_path, str(no_venv), "requirements-dev.lock", path=f"{tmp_path}:/usr/bin:/bin"
    )
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "sudo apt-get install python3-venv" in line and "ensurepip is not available" in line
    assert not (tmp_path / "venv").exists()


def test_when_uv_fails_pip_installs(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake(bin_dir, "uv", 'echo "uv: network unreachable" >&2; exit 2\n')
    lock = tmp_path / "empty.lock"
    lock.write_text("# nothing to install\n")
    done = venv_sh(tmp_path, sys.executable, str(lock), path=f"{bin_dir}:{os.environ['PATH']}")
    assert done.returncode == 0, done.stderr
    assert "uv could not install the locks; trying pip" in done.stderr
    assert (tmp_path / "venv" / "bin" / "python").exists()
