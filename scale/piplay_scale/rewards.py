"""Rewards and group-relative advantages (ALGORITHM.md sections 3-4; piplay's src/rl/rewards.ts, advantages.ts),
in float64 in the order piplay computes them, so that the same inputs give the same numbers to the last bit."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from .text import ExaminerOutput, exact_match, format_source, normalize_answer

# --------------------------------------------------------------------------------------------------
# Student


def student_reward(prediction: str | None, gold: str) -> float:
    """EM of the last `<answer>` against the examiner's answer; no answer scores 0."""
    return 1.0 if prediction is not None and exact_match(prediction, gold) else 0.0


# --------------------------------------------------------------------------------------------------
# Examiner


def solvable(k: int, n: int) -> bool:
    return 0 < k < n


def difficulty_reward(k: int, n: int) -> float:
    """r_d = 1[0 < k < n] · (n - k)/(n - 1)."""
    if not (isinstance(k, int) and isinstance(n, int) and n >= 1 and 0 <= k <= n):
        raise ValueError(f"difficulty_reward: need integers 0 <= k <= n, n >= 1 (got k={k}, n={n})")
    return (n - k) / (n - 1) if solvable(k, n) else 0.0


def tool_score(hops: int, valid_searches: int, tool_replies: int) -> float:
    """1 for h = 1; for h > 1, min((1 + #valid)/h, 1) when the valid searches are as many as the replies and > 0."""
    reward = 1.0 if hops == 1 else 0.0
    if valid_searches == tool_replies and valid_searches > 0:
        reward = min((1 + valid_searches) / hops, 1)
    return reward


def answer_score(answer: str, evidence: str) -> float:
    """1 if the normalised answer is yes/no or occurs in the evidence and has at most 5 words, 0.5 up to 10."""
    a = normalize_answer(answer)
    if not a:
        return 0.0
    if not (a in ("yes", "no") or a in normalize_answer(evidence)):
        return 0.0
    words = len(a.split(" "))
    return 1.0 if words <= 5 else 0.5 if words <= 10 else 0.0


def examiner_format_reward(parsed: ExaminerOutput, hops: int, source: dict) -> float:
    """Dr. Zero's format reward f: 0 without a question and an answer, or with the answer inside the question;
    else (1 + think + tool + ans)/4."""
    if not (isinstance(hops, int) and hops >= 1):
        raise ValueError(f"examiner_format_reward: hops must be >= 1 (got {hops})")
    valid = sum(1 for q in parsed.searches if q.strip() != "")
    replies = len(parsed.informations)
    think = sum(1 for t in parsed.turns if t) / len(parsed.turns) if parsed.turns else 0.0
    tool = tool_score(hops, valid, replies)
    source_text = format_source(source["title"], source["text"])
    evidence = "\n\n".join([source_text, *parsed.informations]) if valid == replies and valid > 0 else source_text
    ans = answer_score(parsed.answer, evidence)
    q, a = parsed.question.strip(), parsed.answer.strip()
    integrity = bool(q) and bool(a) and normalize_answer(a) not in normalize_answer(q)
    return (1 + think + tool + ans) / 4 if integrity else 0.0


def examiner_reward(format_: float, difficulty: float) -> float:
    """r = 0.5·f + r_d, r_d counted only when f > 0."""
    return 0.5 * format_ + (difficulty if format_ > 0 else 0.0)


# --------------------------------------------------------------------------------------------------
# Advantages


def group_advantages(rewards: Sequence[float], groups: Sequence[Hashable], eps: float = 1e-6) -> list[float]:
    """A_i = (r_i - mean_g) / (std_g + eps), std unbiased (n - 1), within the group of i; a group of one gets 0.
    GRPO's groups are a question's rollouts, HRPO's a hop count's questions."""
    if len(rewards) != len(groups):
        raise ValueError(f"group_advantages: {len(rewards)} rewards but {len(groups)} group ids")
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        if not math.isfinite(rewards[i]):
            raise ValueError(f"group_advantages: reward {i} is {rewards[i]}")
        members.setdefault(g, []).append(i)
    out = [0.0] * len(rewards)
    for idx in members.values():
        n = len(idx)
        if n < 2:
            continue
        mean = 0.0
        for i in idx:
            mean += rewards[i]
        mean /= n
        ss = 0.0
        for i in idx:
            ss += (rewards[i] - mean) ** 2
        std = math.sqrt(ss / (n - 1))
        for i in idx:
            out[i] = (rewards[i] - mean) / (std + eps)
    return out
