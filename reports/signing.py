"""PAdES signatures on sealed sheets (pyHanko), and the organisation's signing identity.

The certificate and key come from a PKCS#12 file (SHEET_SIGNING_P12 and
SHEET_SIGNING_PASSPHRASE). Development generates a self-signed one under var/signing/, and
sheets signed with it say so.
"""

import datetime
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from django.conf import settings
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import fields, signers
from pyhanko_certvalidator.util import get_pyca_cryptography_hash

FIELD_NAME = "WorkbenchSeal"
DEV_SUBJECT = "GPU Selection Workbench (development, self-signed)"


class SigningUnavailable(Exception):
    """No usable signing certificate: the message says what is missing."""


@dataclass(frozen=True)
class SigningIdentity:
    signer: signers.SimpleSigner
    subject: str
    certificate_pem: bytes
    self_signed: bool


def create_self_signed_p12(
    path: Path, passphrase: str, *, subject: str = DEV_SUBJECT, algorithm: str = "rsa"
) -> None:
    """A throwaway certificate for development and tests (RSA-3072, or P-256 with
    algorithm="ec"), as a PKCS#12 file."""
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = (
        ec.generate_private_key(ec.SECP256R1())
        if algorithm == "ec"
        else rsa.generate_private_key(public_exponent=65537, key_size=3072)
    )
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, subject),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "GPU Selection Workbench"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,
                key_cert_sign=True,
                crl_sign=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    data = pkcs12.serialize_key_and_certificates(
        b"workbench",
        key,
        cert,
        None,
        serialization.BestAvailableEncryption(passphrase.encode()),
    )
    path.write_bytes(data)
    path.chmod(0o600)


class KeptKeySigner(signers.SimpleSigner):
    """pyHanko's SimpleSigner parses and validates its private key for every signature it
    makes, twice per sealed file (a trial signature sizes the reserved space); validating an
    RSA-3072 key takes about 80 ms. This signer parses it once and keeps it."""

    @functools.cached_property
    def private_key(self) -> Any:
        return serialization.load_der_private_key(self.signing_key.dump(), password=None)

    def sign_raw(self, data: bytes, digest_algorithm: str) -> bytes:
        mechanism = self.get_signature_mechanism_for_digest(digest_algorithm).signature_algo
        key = self.private_key
        digest = get_pyca_cryptography_hash(digest_algorithm)
        if mechanism == "rsassa_pkcs1v15" and isinstance(key, rsa.RSAPrivateKey):
            return key.sign(data, padding.PKCS1v15(), digest)
        if mechanism == "ecdsa" and isinstance(key, ec.EllipticCurvePrivateKey):
            return key.sign(data, ec.ECDSA(digest))
        return super().sign_raw(data, digest_algorithm)  # other mechanisms: pyHanko's own path


def signing_identity() -> SigningIdentity:
    """The organisation's identity from SHEET_SIGNING_P12, loaded once per process and again
    whenever the file or the passphrase changes."""
    path = Path(settings.SHEET_SIGNING_P12) if settings.SHEET_SIGNING_P12 else None
    if path is None or not path.is_file():
        raise SigningUnavailable(
            f"no signing certificate: SHEET_SIGNING_P12={settings.SHEET_SIGNING_P12!r} is not a "
            "readable PKCS#12 file"
        )
    stat = path.stat()
    return _load_identity(
        str(path), stat.st_mtime_ns, stat.st_size, settings.SHEET_SIGNING_PASSPHRASE
    )


@functools.lru_cache(maxsize=4)
def _load_identity(path: str, _mtime_ns: int, _size: int, passphrase: str) -> SigningIdentity:
    loaded = signers.SimpleSigner.load_pkcs12(path, passphrase=passphrase.encode() or None)
    if loaded is None:
        raise SigningUnavailable(f"{path} cannot be opened with SHEET_SIGNING_PASSPHRASE")
    cert = loaded.signing_cert
    if cert is None:
        raise SigningUnavailable(f"{path} holds no certificate")
    signer = KeptKeySigner(
        signing_cert=cert, signing_key=loaded.signing_key, cert_registry=loaded.cert_registry
    )
    subject = cert.subject.human_friendly
    return SigningIdentity(
        signer=signer,
        subject=subject,
        certificate_pem=_pem(cert.dump()),
        self_signed=cert.subject == cert.issuer,
    )


def _pem(der: bytes) -> bytes:
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)


def outside_event_loop[T](function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run pyHanko's synchronous helpers, which call asyncio.run(), in a thread of their own:
    under an ASGI server (or any running event loop) they would fail in the caller's thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args, **kwargs).result()


def sign_pdf(pdf: bytes, identity: SigningIdentity, *, reason: str) -> bytes:
    """A PAdES baseline signature covering the whole document."""
    writer = IncrementalPdfFileWriter(BytesIO(pdf))
    metadata = signers.PdfSignatureMetadata(
        field_name=FIELD_NAME,
        reason=reason,
        subfilter=fields.SigSeedSubFilter.PADES,
        md_algorithm="sha256",
    )
    out = BytesIO()
    outside_event_loop(signers.sign_pdf, writer, metadata, signer=identity.signer, output=out)
    return out.getvalue()


def trusted_certificate_pem() -> bytes | None:
    """The organisation's certificate that verification trusts, or None where none is set up
    (verification then still checks integrity and the stored sealed files)."""
    try:
        return signing_identity().certificate_pem
    except (SigningUnavailable, ValueError, OSError):
        return None
