"""piplay's schedules (src/rl/schedule.ts, src/selfplay/update.ts): λ by iteration and the learning-rate warm-up."""

from __future__ import annotations

import math


def lambda_at(schedule, iteration: int) -> float:
    """λ of an iteration: a number, or a list whose last entry holds on."""
    if isinstance(schedule, (int, float)):
        return float(schedule)
    return float(schedule[min(max(0, iteration), len(schedule) - 1)]) if schedule else 0.0


def warmup_steps(lr_warmup: float, run_optimizer_steps: int) -> int:
    """The warm-up's length: the --lr-warmup share of a policy's optimizer steps in the run, rounded up."""
    return math.ceil(lr_warmup * run_optimizer_steps)


def warmup_lr(lr: float, k: int, warmup: int) -> float:
    """The learning rate of optimizer step k (1-based, counting applied steps): lr·k/warmup until the warm-up's end."""
    return lr * k / warmup if warmup > 0 and k < warmup else lr
