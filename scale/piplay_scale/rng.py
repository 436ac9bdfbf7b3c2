"""piplay's seeded generator (src/env/random.ts), draw for draw: mulberry32 over a seed hashed with FNV-1a and
murmur3's fmix32. The package draws source documents, hop counts and what 'partial' removes of a path from it, so
that it makes the choices piplay makes from the same seed and labels.

JavaScript hashes a string's UTF-16 code units and does its arithmetic in 32 bits; so does this port."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
_M = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    return (a * b) & _M


def _fmix32(h: int) -> int:
    h ^= h >> 16
    h = _imul(h, 0x85EBCA6B)
    h ^= h >> 13
    h = _imul(h, 0xC2B2AE35)
    h ^= h >> 16
    return h & _M


def hash32(text: str, seed: int = 0) -> int:
    """32-bit FNV-1a of the string's UTF-16 code units, mixed with `seed`, finalised with fmix32."""
    h = (0x811C9DC5 ^ seed) & _M
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h ^= units[i] | (units[i + 1] << 8)
        h = _imul(h, 0x01000193)
    return _fmix32(h)


def seed_to_int(seed: int | str) -> int:
    return hash32(seed) if isinstance(seed, str) else _fmix32(int(seed) & _M)


class Rng:
    """A stream of U[0, 1) draws (mulberry32); `fork(label)` derives a stream from the seed and the label only."""

    def __init__(self, seed: int | str):
        self.seed = seed_to_int(seed)
        self._state = self.seed

    def next(self) -> float:
        self._state = (self._state + 0x6D2B79F5) & _M
        t = self._state
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & _M
        return ((t ^ (t >> 14)) & _M) / 4294967296

    def int(self, a: int, b: int | None = None) -> int:
        """Uniform integer in [0, a), or in [a, b)."""
        lo, hi = (0, a) if b is None else (a, b)
        if not hi > lo:
            raise ValueError(f"Rng.int: empty range [{lo}, {hi})")
        return lo + math.floor(self.next() * (hi - lo))

    def pick(self, items: Sequence[T]) -> T:
        if not items:
            raise ValueError("Rng.pick: empty sequence")
        return items[self.int(len(items))]

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A shuffled copy (Fisher-Yates from the end, as piplay's)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.int(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def weighted_index(self, weights: Sequence[float]) -> int:
        total = 0.0
        for w in weights:
            total += w
        if not total > 0:
            raise ValueError("Rng.weighted_index: weights sum to zero")
        u = self.next() * total
        for i, w in enumerate(weights):
            u -= w
            if u < 0:
                return i
        return len(weights) - 1

    def fork(self, label: str) -> Rng:
        return Rng(hash32(label, self.seed))


def rng_for(seed: int, *labels: str | int) -> Rng:
    """The stream of one unit of work, as piplay's rngFor: from the run's seed and the unit's labels."""
    return Rng(f"piplay/{seed}/{'/'.join(str(label) for label in labels)}")
