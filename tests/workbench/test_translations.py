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
