"""A tiny workspace module used by the textstats-local example driver."""

from __future__ import annotations

from collections import Counter


def count_words(text: str, top: int = 3) -> dict[str, object]:
    words = text.split()
    common = [w for w, _ in Counter(w.lower() for w in words).most_common(top)]
    return {
        "words": len(words),
        "lines": len(text.splitlines()),
        "chars": len(text),
        "top_words": common,
    }
