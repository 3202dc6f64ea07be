"""Matching a vendor's claim to the template library's rewrites.

A claim ("supports GPU sharing with MIG", "支持 GPU 配额与抢占") is compared with each template
requirement's feature and its actions' questions, in both languages: words (Latin letters and
digits) and, for Chinese, pairs of adjacent characters, each weighted by how rare it is in the
library (a word every template uses says nothing). Pure functions; no database.
"""

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# A list's bullet or number in front of a pasted claim ("- ", "3) ", "（2）"), removed.
CLAIM_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)、]|[（(]?\d+[)）])\s*")
_WORD = re.compile(r"[a-z0-9][a-z0-9+.-]*[a-z0-9+]|[a-z0-9]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
# Words that appear in claims and templates alike without naming a capability.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "the",
        "their",
        "them",
        "this",
        "to",
        "under",
        "when",
        "which",
        "with",
        "within",
        "without",
        "you",
        "your",
        "support",
        "supports",
        "supported",
        "full",
        "fully",
        "native",
        "natively",
        "any",
        "all",
        "each",
        "every",
        "out",
        "box",
        "enterprise",
        "grade",
    ]
)
# The same for Chinese: pairs that say "supports", "provides", "we", "function".
_STOPWORDS = _STOPWORDS | frozenset(["支持", "提供", "可以", "我们", "以及", "功能", "能力"])
# Below this share of the best possible score, a template is not offered.
MIN_SCORE = 0.12


def tokens(text: str) -> list[str]:
    """The words of `text` (lowercased, stop words out, a plural's trailing s dropped) and the
    pairs of adjacent Chinese characters."""
    normalized = unicodedata.normalize("NFKC", text).casefold()
    found = []
    for word in _WORD.findall(normalized):
        if word in _STOPWORDS or len(word) < 2:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    for run in _HAN.findall(normalized):
        found.extend(
            pair for pair in (run[i : i + 2] for i in range(len(run) - 1)) if pair not in _STOPWORDS
        )
        if len(run) == 1:
            found.append(run)
    return found


@dataclass(frozen=True)
class Candidate:
    """One template requirement as the matcher sees it: its key and all its texts."""

    key: str
    texts: Sequence[str]


@dataclass(frozen=True)
class Match:
    key: str
    score: float  # 0..1: the share of the claim's weight the template covers
    shared: tuple[str, ...]  # the claim's words the template also uses, most telling first


def rank(claim: str, candidates: Iterable[Candidate], *, limit: int = 3) -> list[Match]:
    """The templates that match `claim` best, best first; none when nothing matches well."""
    documents = [(c.key, set(tokens(" ".join(c.texts)))) for c in candidates]
    if not documents:
        return []
    frequency = Counter(token for _key, words in documents for token in words)
    total = len(documents)

    def weight(token: str) -> float:
        return math.log((1 + total) / (1 + frequency[token])) + 1

    wanted = Counter(tokens(claim))
    possible = sum(weight(t) for t in wanted)
    if not possible:
        return []
    matches = []
    for key, words in documents:
        shared = [t for t in wanted if t in words]
        if not shared:
            continue
        score = sum(weight(t) for t in shared) / possible
        if score >= MIN_SCORE:
            ordered = tuple(sorted(shared, key=lambda t: (-weight(t), t)))
            matches.append(Match(key, round(score, 3), ordered))
    matches.sort(key=lambda m: (-m.score, m.key))
    return matches[:limit]
