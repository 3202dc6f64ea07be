"""Every message has its Simplified Chinese translation, and the compiled catalogue that ships
is the one its .po file compiles to."""

import gettext
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"


def _entries(*flags: str) -> str:
    result = subprocess.run(["msgattrib", *flags, str(PO)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_every_message_is_translated_and_none_is_a_guess() -> None:
    assert _entries("--untranslated") == ""
    assert _entries("--only-fuzzy") == ""


def test_the_shipped_catalogue_is_compiled_from_the_po_file(tmp_path: Path) -> None:
    fresh = tmp_path / "django.mo"
    subprocess.run(["msgfmt", "--check", "-o", str(fresh), str(PO)], check=True)

    def catalogue(path: Path) -> dict:
        with path.open("rb") as handle:
            return dict(gettext.GNUTranslations(handle)._catalog)  # type: ignore[attr-defined]

    shipped = catalogue(PO.with_suffix(".mo"))
    assert catalogue(fresh) == shipped
    assert shipped["Procurement sheets"] == "采购评审单"


def test_every_message_in_the_code_is_in_the_catalogue(tmp_path: Path) -> None:
    """Extract the messages again from a copy of the code and compare both ways: nothing
    marked for translation is missing, and nothing left over."""
    import os
    import shutil
    import sys

    copy = tmp_path / "src"
    shutil.copytree(
        ROOT,
        copy,
        ignore=shutil.ignore_patterns(".venv", "var", ".git", "__pycache__", "*.egg-info"),
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings"}
    env.update({"WORKBENCH_VAR_DIR": str(tmp_path / "var"), "DATABASE_URL": ""})
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "--no-obsolete"]
        + [f"--ignore={folder}" for folder in (".venv", "var", "tests", "bench")],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
    )
    extracted = copy / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
    for definitions, reference in ((PO, extracted), (extracted, PO)):
        compared = subprocess.run(
            ["msgcmp", "--use-untranslated", str(definitions), str(reference)],
            capture_output=True,
            text=True,
        )
        assert compared.returncode == 0, compared.stderr
