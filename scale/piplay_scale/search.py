"""The search tool: piplay's corpus (the world, or a JSONL corpus of {id, title, text}) and its BM25 ranking
(src/env/corpus.ts, bm25.ts), score for score: Lucene's idf, k1 = 0.9, b = 0.4, the (k1 + 1) factor, exact
document lengths, piplay's tokenizer (lowercase, split on anything that is neither a letter nor a digit, a small
stopword list), ties in corpus order."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

#: The world piplay's default settings train on (world seed 1, 400 entities), as `npm run pretrain` writes it.
REPO = Path(__file__).resolve().parents[2]
WORLD_CORPUS = REPO / "public" / "worlds" / "default" / "corpus.jsonl"

STOPWORDS = frozenset(
    "a an the of in on at to and or by for with as from into is was are were be been it its this that which what "
    "who whom whose where when how did does do".split()
)
# Python's `\w` is [\p{L}\p{N}_]: splitting on what is not a word character, or is `_`, splits on what is neither a
# letter nor a digit, as piplay's /[^\p{L}\p{N}]+/u.
_SPLIT = re.compile(r"(?:[^\w]|_)+")
#: The longest passage text piplay accepts, in characters.
MAX_PASSAGE_CHARS = 100_000


def tokenize(text: str, stopwords: bool = True) -> list[str]:
    return [t for t in _SPLIT.split(text.lower()) if t and not (stopwords and t in STOPWORDS)]


class CorpusError(ValueError):
    """A corpus file that cannot be read; the message names the file and line."""


def read_corpus(path: str | Path) -> list[dict]:
    """Passages {id, title, text} of a JSONL corpus (blank lines skipped); every field a non-empty string."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such corpus file; give a JSONL file with one {{id, title, text}} per line")
    passages: list[dict] = []
    seen: dict[str, int] = {}
    text = path.read_text(encoding="utf-8-sig")
    for n, raw in enumerate(text.split("\n"), 1):
        raw = raw.rstrip("\r")
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{n}: bad JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise CorpusError(f"{path}:{n}: expected a JSON object")
        for key in ("id", "title", "text"):
            v = obj.get(key)
            if not isinstance(v, str) or not v.strip():
                raise CorpusError(f'{path}:{n}: field "{key}" must be a non-empty string')
        if len(obj["text"]) > MAX_PASSAGE_CHARS:
            raise CorpusError(f'{path}:{n}: passage "{obj["id"]}" is longer than {MAX_PASSAGE_CHARS} characters')
        if obj["id"] in seen:
            raise CorpusError(f'{path}:{n}: duplicate id "{obj["id"]}" (first on line {seen[obj["id"]]})')
        seen[obj["id"]] = n
        passages.append({"id": obj["id"], "title": obj["title"], "text": obj["text"]})
    if not passages:
        raise CorpusError(f"{path}: the corpus holds no passages")
    return passages


def corpus_of(name: str) -> list[dict]:
    """'world' (the default world's corpus in this repository) or a JSONL corpus file."""
    if name == "world":
        if not WORLD_CORPUS.exists():
            raise CorpusError(
                f"--corpus world: {WORLD_CORPUS} is missing; run from a clone of piplay, or give --corpus FILE.jsonl"
            )
        return read_corpus(WORLD_CORPUS)
    return read_corpus(name)


class Bm25:
    """An inverted index over fixed passages (title and text)."""

    def __init__(self, passages: list[dict], k1: float = 0.9, b: float = 0.4, stopwords: bool = True):
        self.passages = passages
        self.k1, self.b, self.stopwords = k1, b, stopwords
        self.postings: dict[str, tuple[list[int], list[int]]] = {}
        self.lengths: list[int] = []
        total = 0
        for d, p in enumerate(passages):
            tokens = tokenize(f"{p['title']} {p['text']}", stopwords)
            self.lengths.append(len(tokens))
            total += len(tokens)
            counts: dict[str, int] = {}
            for t in tokens:
                counts[t] = counts.get(t, 0) + 1
            for t, tf in counts.items():
                docs, tfs = self.postings.setdefault(t, ([], []))
                docs.append(d)
                tfs.append(tf)
        self.avgdl = total / len(passages) if passages else 0.0

    def idf(self, term: str) -> float:
        n = len(self.passages)
        df = len(self.postings.get(term, ((), ()))[0])
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> list[float]:
        scores = [0.0] * len(self.passages)
        if self.avgdl == 0:
            return scores
        for term in tokenize(query, self.stopwords):
            post = self.postings.get(term)
            if post is None:
                continue
            idf = self.idf(term)
            for d, tf in zip(*post, strict=True):
                norm = self.k1 * (1 - self.b + (self.b * self.lengths[d]) / self.avgdl)
                scores[d] += (idf * tf * (self.k1 + 1)) / (tf + norm)
        return scores

    def search(self, query: str, k: int = 3) -> list[tuple[dict, float]]:
        """The top-k passages sharing a token with the query, best first, with their scores."""
        scores = self.scores(query)
        hits = sorted((d for d, s in enumerate(scores) if s > 0), key=lambda d: (-scores[d], d))
        return [(self.passages[d], scores[d]) for d in hits[: max(0, k)]]
