"""The words of π-Play as piplay writes them (src/env/tags.ts, prompts.ts, em.ts, sentences.ts), character for
character: the tool tags and the tool reply, the three roles' prompts, the teacher's privileged block in every mode
and rendering, the parsers of what the policies wrote, and exact match. The scale check compares every function
here with piplay's output on the same inputs (piplay_scale/crosscheck.py).

JavaScript's white space (`\\s`, `trim`) is not Python's, so it is spelled out; its `\\w` is ASCII."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .rng import Rng

# --------------------------------------------------------------------------------------------------
# JavaScript's white space and its helpers

_WS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
WS = f"[{_WS}]"
NOT_WS = f"[^{_WS}]"
_WS_RUN = re.compile(f"{WS}+")
_TRIM = re.compile(f"^{WS}+|{WS}+$")


def js_trim(s: str) -> str:
    return _TRIM.sub("", s)


def one_line(s: str) -> str:
    """White-space runs to one space, trimmed."""
    return js_trim(_WS_RUN.sub(" ", s))


# --------------------------------------------------------------------------------------------------
# Tags (ALGORITHM.md section 2)

TAGS = {
    "think": ("<think>", "</think>"),
    "search": ("<search>", "</search>"),
    "information": ("<information>", "</information>"),
    "answer": ("<answer>", "</answer>"),
    "question": ("<question>", "</question>"),
}
INFORMATION_OPEN, INFORMATION_CLOSE = TAGS["information"]
SEARCH_CLOSE = "</search>"
ANSWER_CLOSE = "</answer>"
QUESTION_OPEN = "<question>"
STUDENT_STOP_STRINGS = ("</search>", "</answer>")
EXAMINER_STOP_STRINGS = ("</search>", "</answer>")
NO_RESULTS = "No results."


def in_tags(tag: str, body: str | None = None) -> str:
    """`<tag> body </tag>` (a space inside each tag), the form in which prompts show the format."""
    open_, close = TAGS[tag]
    return f"{open_} {close}" if body is None else f"{open_} {body} {close}"


def format_doc(index: int, title: str, text: str) -> str:
    return f"Doc {index} (Title: {one_line(title)}) {one_line(text)}"


def format_information_body(passages) -> str:
    """The body of a tool reply: `Doc i (Title: T) text` lines joined by newlines, or 'No results.'."""
    if not passages:
        return NO_RESULTS
    return "\n".join(format_doc(i + 1, p["title"], p["text"]) for i, p in enumerate(passages))


_LINE = "[^\n\r\u2028\u2029]"
_DOC_LINE = re.compile(f"^Doc (\\d+) \\(Title: ({_LINE}*?)\\) ({_LINE}*)$")


def parse_information_body(body: str) -> list[dict] | None:
    docs = []
    for line in body.split("\n"):
        m = _DOC_LINE.match(line)
        if not m:
            return None
        docs.append({"index": int(m.group(1)), "title": m.group(2), "text": m.group(3)})
    return docs


_ACTION = re.compile(r"<(search|answer)>([\s\S]*?)</\1>")


def parse_student_turn(text: str) -> tuple[str, str] | None:
    """The first complete `<search>` or `<answer>` of a turn, as (kind, trimmed body); None if there is none."""
    m = _ACTION.search(text)
    return None if m is None else (m.group(1), js_trim(m.group(2)))


def first_stop(text: str, stops) -> str | None:
    """The stop string whose first occurrence in `text` ends earliest."""
    best, best_end = None, float("inf")
    for s in stops:
        at = text.find(s)
        if at >= 0 and at + len(s) < best_end:
            best, best_end = s, at + len(s)
    return best


def last_search_query(turn: str) -> str | None:
    q = None
    for m in re.finditer(r"<search>([\s\S]*?)</search>", turn):
        q = js_trim(m.group(1))
    return q


def _last_tag(text: str, tag: str) -> str | None:
    open_, close = TAGS[tag]
    last = None
    for m in re.finditer(re.escape(open_) + r"([\s\S]*?)" + re.escape(close), text):
        last = m.group(1)
    return None if last is None else js_trim(last)


def final_answer(policy_text: str) -> str | None:
    """The last `<answer>` of the policy's own text, trimmed; None if it wrote none."""
    return _last_tag(policy_text, "answer")


_THINK_FIRST = re.compile(f"^{WS}*<think>[\\s\\S]*?</think>")


def opens_with_think(turn: str) -> bool:
    return _THINK_FIRST.match(turn) is not None


@dataclass
class ExaminerOutput:
    question: str
    answer: str
    searches: list[str]
    #: Per non-empty assistant turn: whether it opens with a complete think block.
    turns: list[bool]
    informations: list[str]


def parse_examiner_turns(turns: list[str], informations: list[str]) -> ExaminerOutput:
    """The examiner's question, answer and searches from its own turns (tool replies given apart)."""
    own = "\n".join(turns)
    return ExaminerOutput(
        question=_last_tag(own, "question") or "",
        answer=_last_tag(own, "answer") or "",
        searches=[js_trim(m.group(1)) for m in re.finditer(r"<search>([\s\S]*?)</search>", own)],
        turns=[opens_with_think(t) for t in turns if js_trim(t) != ""],
        informations=list(informations),
    )


# --------------------------------------------------------------------------------------------------
# Prompts

STUDENT_INSTRUCTIONS = (
    f"Answer the question. Think inside {in_tags('think')} every time you get new information. "
    f"To search, write {in_tags('search', 'query')}; the results come back inside {in_tags('information')}. "
    f"Search as often as you need. When you know the answer, write it inside {in_tags('answer')} "
    f"without explanation, for example {in_tags('answer', 'Beijing')}."
)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_source(title: str, text: str) -> str:
    return f"(Title: {one_line(title)}) {one_line(text)}"


def _question_line(question: str) -> str:
    return f"Question: {one_line(question)}\n"


def student_prompt(question: str) -> str:
    return f"{STUDENT_INSTRUCTIONS}\n{_question_line(question)}"


def examiner_prompt(source: dict, hops: int) -> str:
    if not (isinstance(hops, int) and hops >= 1):
        raise ValueError(f"examiner_prompt: hops must be >= 1 (got {hops})")
    if hops == 1:
        task = (
            "Write one question and its answer from the source document below. "
            "The answer must be a fact stated in the document. Do not search."
        )
    else:
        task = (
            f"Write one question and its answer that take exactly {plural(hops, 'hop')}, "
            "starting from the source document below. "
            "Hop 1 is an entity named in the document. "
            f"Search exactly {plural(hops - 1, 'time')} with {in_tags('search', 'query')}, "
            "each time following a fact about the previous hop; "
            f"the results come back inside {in_tags('information')}. "
            f"The question names only hop 1; the answer is hop {hops}."
        )
    return (
        f"{task} Think inside {in_tags('think')} before each step. "
        f"End with {in_tags('question', 'question')}{in_tags('answer', 'answer')}. "
        "The answer is a short name, place or year that appears in the documents but not in the question.\n"
        f"Hops: {hops}\nSource document: {format_source(source['title'], source['text'])}\n"
    )


# --------------------------------------------------------------------------------------------------
# The teacher's privileged block (ALGORITHM.md section 6)


@dataclass
class Qcp:
    """The question construction path: source document, each search with its tool reply, question, answer."""

    source: dict  # {title, text}
    hops: int
    searches: list[dict] = field(default_factory=list)  # [{query, information}]
    question: str = ""
    answer: str = ""

    @staticmethod
    def from_json(d: dict) -> Qcp:
        return Qcp(
            source={"title": d["source"]["title"], "text": d["source"]["text"]},
            hops=d["hops"],
            searches=[{"query": s["query"], "information": s["information"]} for s in d["searches"]],
            question=d["question"],
            answer=d["answer"],
        )

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "hops": self.hops,
            "searches": self.searches,
            "question": self.question,
            "answer": self.answer,
        }


#: full QCP, partial QCP, answer only, answer + hop count, no teacher (Dr. Zero), and `self`: the same EMA teacher
#: with the student's own prompt (no block), so that D measures only the pull towards a slow copy of the student.
PRIVILEGED_MODES = ("full", "partial", "gt", "gt-hop", "none", "self")
NOTES_RENDERINGS = ("passages", "compact", "answer-first")
PRIVILEGED_HEADER = "Private notes on how this question was made:"
_WORD = re.compile(f"{NOT_WS}+")


def _first_words(text: str, keep: int) -> str:
    if keep <= 0:
        return ""
    end = 0
    for k, m in enumerate(_WORD.finditer(text), 1):
        end = m.end()
        if k == keep:
            break
    return text[:end]


def partial_qcp(qcp: Qcp, seed: str, drop_fraction: float = 0.5) -> tuple[dict | None, list[dict]]:
    """The paper's partial QCP: round(drop · W) of the W words of the path's content (source text, then each search
    result) removed, pieces taken in a seeded order, the last one cut at its tail. Returns (source or None, searches
    kept with their 1-based numbers)."""
    texts = [qcp.source["text"], *(s["information"] for s in qcp.searches)]
    kept = [len(_WORD.findall(t)) for t in texts]
    remove = _js_round(drop_fraction * sum(kept))
    for i in Rng(seed).shuffle(list(range(len(texts)))):
        d = min(kept[i], remove)
        kept[i] -= d
        remove -= d
    source = {"title": qcp.source["title"], "text": _first_words(texts[0], kept[0])} if kept[0] > 0 else None
    searches = [
        {"number": j + 1, "query": s["query"], "information": _first_words(texts[j + 1], kept[j + 1])}
        for j, s in enumerate(qcp.searches)
        if kept[j + 1] > 0
    ]
    return source, searches


def _js_round(x: float) -> int:
    """JavaScript's Math.round: halves go up."""
    import math

    return math.floor(x + 0.5)


def sentences_of(text: str) -> list[str]:
    return re.split(f"(?<=\\.){WS}+", text)


def mentions(text: str, value: str) -> bool:
    return re.search(f"(^|[^A-Za-z0-9_]){re.escape(value)}([^A-Za-z0-9_]|$)", text) is not None


def _ascii_words(s: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9_]+", s.lower())


def _lead_score(sentence: str, lead: str) -> float:
    if mentions(sentence, lead):
        return float("inf")
    words = set(_ascii_words(sentence))
    return sum(1 for w in _ascii_words(lead) if len(w) > 2 and w in words)


def _best_sentence(texts: list[str], lead: str) -> tuple[int, str]:
    first = sentences_of(texts[0] if texts else "")
    best = (0, first[0] if first else "", -1.0)
    for index, text in enumerate(texts):
        for sentence in sentences_of(text):
            score = _lead_score(sentence, lead)
            if score > best[2]:
                best = (index, sentence, score)
    return best[0], best[1]


def _compact_information(information: str, lead: str) -> str:
    docs = parse_information_body(information)
    if not docs:
        return information
    index, sentence = _best_sentence([d["text"] for d in docs], lead)
    return format_doc(docs[index]["index"], docs[index]["title"], sentence)


def compact_qcp(qcp: Qcp) -> Qcp:
    """Each document of the path cut to the sentence that leads to the next step (piplay's compact notes)."""

    def lead(i: int) -> str:
        return qcp.searches[i]["query"] if i < len(qcp.searches) else qcp.answer

    return Qcp(
        source={"title": qcp.source["title"], "text": _best_sentence([qcp.source["text"]], lead(0))[1]},
        hops=qcp.hops,
        searches=[
            {"query": s["query"], "information": _compact_information(s["information"], lead(j + 1))}
            for j, s in enumerate(qcp.searches)
        ],
        question=qcp.question,
        answer=qcp.answer,
    )


def privileged_block(
    qcp: Qcp, mode: str, *, notes: str = "passages", seed: str | None = None, drop_fraction: float = 0.5
) -> str:
    """The teacher's privileged block (ends with a newline; '' for 'none' and 'self')."""
    if mode in ("none", "self"):
        return ""
    if mode == "gt":
        return f"{PRIVILEGED_HEADER} the answer is {one_line(qcp.answer)}.\n"
    if mode == "gt-hop":
        return f"{PRIVILEGED_HEADER} the answer is {one_line(qcp.answer)}; it takes {plural(qcp.hops, 'hop')}.\n"
    if mode not in ("full", "partial"):
        raise ValueError(f"privileged mode '{mode}' is not one of {', '.join(PRIVILEGED_MODES)}")
    if notes in ("compact", "answer-first"):
        qcp = compact_qcp(qcp)
    if mode == "full":
        source, searches = qcp.source, [{"number": j + 1, **s} for j, s in enumerate(qcp.searches)]
    else:
        if seed is None:
            raise ValueError("privileged mode 'partial' needs a seed")
        source, searches = partial_qcp(qcp, seed, drop_fraction)
    lines = [privileged_block(qcp, "gt").rstrip("\n") if notes == "answer-first" else PRIVILEGED_HEADER]
    if source:
        lines.append(f"Source document: {format_source(source['title'], source['text'])}")
    for s in searches:
        lines.append(f"Search {s['number']}: {one_line(s['query'])}")
        lines.append(f"{INFORMATION_OPEN}{s['information']}{INFORMATION_CLOSE}")
    lines.append(f"Question: {one_line(qcp.question)}")
    lines.append(f"Answer: {one_line(qcp.answer)}")
    return "\n".join(lines) + "\n"


def teacher_prompt(question: str, block: str) -> str:
    """The student's prompt with the privileged block before the question line."""
    return f"{STUDENT_INSTRUCTIONS}\n{block}{_question_line(question)}"


# --------------------------------------------------------------------------------------------------
# Exact match (SQuAD style, as Search-R1 and Dr. Zero)

PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# Python's `\w` on str patterns is Unicode-aware, as Dr. Zero's `\b(a|an|the)\b`.
_ARTICLES = re.compile(r"(?<!\w)(?:a|an|the)(?!\w)")


def normalize_answer(s: str) -> str:
    no_punct = "".join(ch for ch in s.lower() if ch not in PUNCTUATION)
    return " ".join(w for w in _WS_RUN.split(_ARTICLES.sub(" ", no_punct)) if w)


def exact_match(prediction: str, golds) -> bool:
    p = normalize_answer(prediction)
    return any(normalize_answer(g) == p for g in ([golds] if isinstance(golds, str) else golds))
