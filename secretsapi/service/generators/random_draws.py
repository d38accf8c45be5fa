"""Uniform random draws from os.urandom: characters of an alphabet, and passwords holding every class."""

from __future__ import annotations

import os

# Tries of the uniform draw before the constructive one; only option sets where few strings
# hold every class (a class of one or two characters in a short password) get that far.
_PASSWORD_TRIES = 64


def password(length: int, pools: tuple[str, ...]) -> str:
    """``length`` characters of the enabled classes with at least one of each.

    Drawn from the union and kept only when every class is present: uniform over all such
    passwords, and ~1.1 draws at length 24 with four classes. Rare option sets that keep
    failing get one character per class plus the rest from the union, shuffled.
    """
    union = "".join(pools)
    draw = Draw(4 * length + 16)  # a block covers the first try's bytes and then some
    for _ in range(_PASSWORD_TRIES):
        chars = draw.choices(union, length)
        present = set(chars)
        if all(not present.isdisjoint(pool) for pool in pools):
            return "".join(chars)
    chars = [pool[draw.below(len(pool))] for pool in pools]
    chars.extend(draw.choices(union, length - len(chars)))
    for i in range(len(chars) - 1, 0, -1):  # Fisher-Yates
        j = draw.below(i + 1)
        chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


class Draw:
    """Uniform random integers from blocks of os.urandom, by rejection sampling (no modulo bias).

    ``secrets.choice`` asks the kernel once per character; a 5,000-secret sync did that about
    240,000 times. The same source (os.urandom) and the same exact uniformity, a block at a time.
    """

    __slots__ = ("_block", "_pos")

    def __init__(self, expected: int) -> None:
        self._block = os.urandom(max(expected, 16))
        self._pos = 0

    def _bytes(self, count: int) -> bytes:
        if self._pos + count > len(self._block):
            self._block = os.urandom(max(count, 64))
            self._pos = 0
        chunk = self._block[self._pos : self._pos + count]
        self._pos += count
        return chunk

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), n >= 1."""
        width = max(1, (n.bit_length() + 7) // 8)
        span = 256**width
        limit = span - span % n  # draws at or past this would favour the small results
        while True:
            value = int.from_bytes(self._bytes(width), "big")
            if value < limit:
                return value % n

    def choices(self, alphabet: str, count: int) -> list[str]:
        """``count`` characters of ``alphabet``, each uniform and independent."""
        n = len(alphabet)
        if n > 256:
            return [alphabet[self.below(n)] for _ in range(count)]
        limit = 256 - 256 % n
        out: list[str] = []
        while len(out) < count:
            # Enough bytes for the rest after the expected rejections (at most half), plus slack.
            for byte in self._bytes(2 * (count - len(out)) + 8):
                if byte < limit:
                    out.append(alphabet[byte % n])
                    if len(out) == count:
                        break
        return out
