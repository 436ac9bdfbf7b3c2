"""The pieces the package re-implements from piplay (the cross-check compares them on piplay's own outputs too):
the seeded stream, the `self` mode, exact match, the examiner's format reward and group advantages."""

from piplay_scale.rewards import answer_score, examiner_format_reward, group_advantages, tool_score
from piplay_scale.rng import Rng, hash32
from piplay_scale.text import (
    PRIVILEGED_HEADER,
    Qcp,
    normalize_answer,
    parse_examiner_turns,
    privileged_block,
    student_prompt,
    teacher_prompt,
)

QCP = Qcp(
    source={"title": "Beyond Thefyn", "text": "Beyond Thefyn is a poetry collection by Noraexel Moufeirani."},
    hops=2,
    searches=[
        {
            "query": "Noraexel Moufeirani",
            "information": "Doc 1 (Title: Noraexel Moufeirani) Noraexel Moufeirani was born in Poupol.",
        }
    ],
    question="Where was the author of Beyond Thefyn born?",
    answer="Poupol",
)


def test_rng_draws_what_piplay_draws():
    # Values printed by piplay's src/env/random.ts for the same seeds.
    r = Rng("piplay/0/examiner/0/0")
    assert [r.next(), r.next(), r.int(7)] == [0.1922046614345163, 0.35398037219420075, 6]
    assert Rng("piplay/0/examiner/0/0").fork("sources").next() == 0.36723890993744135
    assert hash32("Ünïcödé ✓ 𝄞") == 361240960  # UTF-16 code units, a surrogate pair included
    assert Rng(42).shuffle(list(range(10))) == [6, 3, 7, 8, 1, 5, 2, 0, 9, 4]
    assert Rng("w").weighted_index([4, 3, 2, 1]) == 0


def test_self_mode_teacher_reads_the_students_prompt():
    block = privileged_block(QCP, "self")
    assert block == "" == privileged_block(QCP, "none")
    assert teacher_prompt(QCP.question, block) == student_prompt(QCP.question)
    full = privileged_block(QCP, "full")
    assert full.startswith(PRIVILEGED_HEADER) and "Search 1: Noraexel Moufeirani" in full
    assert teacher_prompt(QCP.question, full).replace(full, "") == student_prompt(QCP.question)


def test_exact_match_normalisation():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("an apple, a day") == "apple day"
    assert normalize_answer("Théâtre — “Quoted”") == "théâtre — “quoted”"  # non-ASCII punctuation kept


def test_examiner_format_reward():
    turns = [
        "<think>source</think><search>Noraexel Moufeirani</search>",
        "<think>born</think><question>Where was the author of Beyond Thefyn born?</question><answer>Poupol</answer>",
    ]
    parsed = parse_examiner_turns(turns, [QCP.searches[0]["information"]])
    assert (parsed.question, parsed.answer, parsed.searches) == (QCP.question, "Poupol", ["Noraexel Moufeirani"])
    # think 1, tool min((1 + 1)/2, 1) = 1, ans 1 (in the retrieved text, one word): f = 1.
    assert examiner_format_reward(parsed, 2, QCP.source) == 1.0
    assert tool_score(3, 1, 1) == 2 / 3 and tool_score(2, 1, 2) == 0 and tool_score(1, 0, 0) == 1
    assert (
        answer_score("yes", "") == 1
        and answer_score("one two three four five six", "one two three four five six") == 0.5
    )
    leaked = parse_examiner_turns(["<question>Is Poupol far?</question><answer>Poupol</answer>"], [])
    assert examiner_format_reward(leaked, 1, QCP.source) == 0.0


def test_group_advantages():
    a = group_advantages([1, 0, 0, 1, 5], ["q", "q", "r", "r", "s"])
    assert a[4] == 0.0  # a group of one
    assert a[0] == 0.5 / (0.5**0.5 + 1e-6) == -a[1]  # mean 0.5, unbiased std sqrt(0.5), eps 1e-6
