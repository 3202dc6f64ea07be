"""Rules written once and used across the apps."""

import hashlib

from django.contrib.auth.models import AnonymousUser
from django.utils import translation

from workbench.hashing import sha256_chunks
from workbench.languages import is_chinese, product_language
from workbench.people import stored_user
from workbench.text import first_free


def test_first_free_name() -> None:
    assert first_free("quota", set()) == "quota"
    assert first_free("quota", {"quota", "quota-2", "quota-4"}) == "quota-3"


def test_product_language_folds_every_chinese_code() -> None:
    for code in ("zh", "zh-hans", "zh-Hans", "zh-CN", "ZH-TW"):
        assert is_chinese(code) and product_language(code) == "zh-hans"
    for code in ("en", "en-GB", "fr", ""):
        assert product_language(code) == "en"
    with translation.override("zh-hans"):
        assert product_language() == "zh-hans"
    with translation.override("en"):
        assert product_language() == "en"


def test_sha256_of_chunks_is_the_digest_of_the_whole() -> None:
    chunks = [b"abc", b"", b"def" * 1000]
    assert sha256_chunks(chunks) == (hashlib.sha256(b"".join(chunks)).hexdigest(), 3003)
    assert sha256_chunks([]) == (hashlib.sha256(b"").hexdigest(), 0)


def test_stored_user_keeps_people_only() -> None:
    class Member:
        is_authenticated = True

    member = Member()
    assert stored_user(member) is member
    assert stored_user(AnonymousUser()) is None
    assert stored_user(None) is None
