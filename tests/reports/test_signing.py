"""The signing identity (loaded once, reloaded on change), signers for RSA and EC keys, and the
collector pause that rendering runs under."""

import gc
import subprocess
import threading
import weakref
from io import BytesIO, StringIO

import pytest
from pypdf import PdfWriter

from reports import signing
from reports.rendering import cyclic_gc_paused
from reports.verify import verify_pdf


def _blank_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


def test_the_identity_is_loaded_once_and_again_when_the_file_changes(settings, tmp_path) -> None:
    path = tmp_path / "org.p12"
    signing.create_self_signed_p12(path, "first", subject="First Organisation")
    settings.SHEET_SIGNING_P12 = str(path)
    settings.SHEET_SIGNING_PASSPHRASE = "first"
    first = signing.signing_identity()
    assert signing.signing_identity() is first
    assert "First Organisation" in first.subject

    # The organisation rotates its certificate: same path, new file, new passphrase.
    signing.create_self_signed_p12(path, "second", subject="Second Organisation")
    with pytest.raises(signing.SigningUnavailable, match="cannot be opened"):
        signing.signing_identity()  # the old passphrase no longer opens it
    settings.SHEET_SIGNING_PASSPHRASE = "second"
    second = signing.signing_identity()
    assert second is not first and "Second Organisation" in second.subject

    path.unlink()
    with pytest.raises(signing.SigningUnavailable, match="not a readable PKCS#12"):
        signing.signing_identity()


@pytest.mark.django_db
def test_rsa_and_ec_keys_both_seal_files_that_verify(settings, tmp_path, signing_p12) -> None:
    ec_path = tmp_path / "ec.p12"
    signing.create_self_signed_p12(
        ec_path, "ec-pass", subject="EC Test Organisation", algorithm="ec"
    )
    for path, passphrase in (
        (signing_p12, settings.SHEET_SIGNING_PASSPHRASE),
        (ec_path, "ec-pass"),
    ):
        settings.SHEET_SIGNING_P12 = str(path)
        settings.SHEET_SIGNING_PASSPHRASE = passphrase
        identity = signing.signing_identity()
        sealed = signing.sign_pdf(_blank_pdf(), identity, reason="test")
        report = verify_pdf(sealed, trusted_pem=identity.certificate_pem)
        assert report.intact and report.covers_whole_file and report.trusted_signer, report
        target = tmp_path / f"{path.stem}-sealed.pdf"
        target.write_bytes(sealed)
        pdfsig = subprocess.run(["pdfsig", str(target)], capture_output=True, text=True)
        assert "Signature Validation: Signature is Valid." in pdfsig.stdout, pdfsig.stdout


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_rendering_pauses_the_collector_and_collects_what_it_left() -> None:
    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():  # nested: the inner exit must not switch it back on
            pass
        assert not gc.isenabled()
        cycle = _Node()
        ref = weakref.ref(cycle)
        del cycle
        assert ref() is not None  # a cycle outlives its last name while paused
    assert gc.isenabled()
    assert ref() is None  # and is freed on the way out


def test_concurrent_renderings_switch_the_collector_back_on_only_when_all_are_done() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with cyclic_gc_paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with cyclic_gc_paused():
        thread.start()
        assert entered.wait(10)
    assert not gc.isenabled()  # the other rendering is still running
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_the_process_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_development_certificate_is_made_once_and_never_in_production(
    settings, tmp_path
) -> None:
    from django.core.management import CommandError, call_command

    settings.SHEET_SIGNING_P12 = str(tmp_path / "signing" / "dev.p12")
    settings.SHEET_SIGNING_PASSPHRASE = "dev"
    out = StringIO()
    call_command("signing_cert", stdout=out)
    assert "new, self-signed" in out.getvalue()
    identity = signing.signing_identity()
    assert identity.self_signed and signing.DEV_SUBJECT in identity.subject
    first = (tmp_path / "signing" / "dev.p12").read_bytes()
    call_command("signing_cert", stdout=(out := StringIO()))
    assert "(kept)" in out.getvalue()
    assert (tmp_path / "signing" / "dev.p12").read_bytes() == first

    settings.PRODUCTION = True
    settings.SHEET_SIGNING_P12 = str(tmp_path / "prod.p12")
    with pytest.raises(CommandError, match="Refusing"):
        call_command("signing_cert")
    assert not (tmp_path / "prod.p12").exists()
