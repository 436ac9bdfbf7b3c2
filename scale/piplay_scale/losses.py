"""The per-token terms of ALGORITHM.md section 5, as piplay computes them (src/rl/losses.ts; the kernels
shaders/clipped_ratio.wgsl and topk_kl.wgsl), in torch. Every tensor is [B, T] over a batch's completion tokens;
the callers sum the terms over the mask and divide by the tokens of the whole optimizer step (a token-mean over the
batch, not a mean of per-sequence means).

  L_GRPO  -min(r·A, clip(r, 1-ε_low, 1+ε_high)·A),  r = exp(clamp(logp - old_logp, ±20))
  k3      exp(q) - q - 1,  q = ref_logp - logp
  D       the top-K KL: the student's K most likely tokens (full-vocabulary log-softmax), the teacher's log-probs at
          the same tokens, one tail bucket each side (or the K renormalised), KL(S||T) (reverse) or KL(T||S)
  L_E     -A · logp (the examiner: on-policy, no ratio)"""

from __future__ import annotations

import torch

MAX_LOG_RATIO = 20.0
#: The floor of a tail mass before its log (piplay's TINY).
TINY = 1e-30


def clipped_ratio(
    logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, eps_low: float, eps_high: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The clipped-ratio term per token and whether its clipped branch is the active one (strictly smaller)."""
    r = torch.exp(torch.clamp(logp - old_logp, -MAX_LOG_RATIO, MAX_LOG_RATIO))
    unclipped = r * advantages
    clipped = torch.clamp(r, 1 - eps_low, 1 + eps_high) * advantages
    return -torch.minimum(unclipped, clipped), (clipped < unclipped).detach()


def k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    q = ref_logp - logp
    return torch.exp(q) - q - 1


def topk_kl(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, k: int, *, tail: bool = True, reverse: bool = True
) -> torch.Tensor:
    """D per position of [..., V] logits (already divided by the temperature); the teacher is a constant.

    With the tail, each side's tail mass is the sum of its probabilities off the support (not 1 - Σ top-K, which
    cancels when the top K hold nearly all of it), floored at TINY before its log; without it, both sides are
    renormalised over the K tokens."""
    teacher_logits = teacher_logits.detach()
    s_logp = torch.log_softmax(student_logits.float(), -1)
    t_logp = torch.log_softmax(teacher_logits.float(), -1)
    k = min(k, s_logp.shape[-1])
    a, ids = s_logp.topk(k, dim=-1)
    b = t_logp.gather(-1, ids)
    if tail:
        off = torch.ones_like(s_logp, dtype=torch.bool).scatter(-1, ids, False)
        neg = torch.finfo(s_logp.dtype).min
        a_tail = torch.logsumexp(s_logp.masked_fill(~off, neg), -1, keepdim=True).clamp(
            min=torch.log(torch.tensor(TINY))
        )
        b_tail = torch.logsumexp(t_logp.masked_fill(~off, neg), -1, keepdim=True).clamp(
            min=torch.log(torch.tensor(TINY))
        )
        a, b = torch.cat([a, a_tail], -1), torch.cat([b, b_tail], -1)
    else:
        a = a - torch.logsumexp(a, -1, keepdim=True)
        b = b - torch.logsumexp(b, -1, keepdim=True)
    if reverse:
        return (a.exp() * (a - b)).sum(-1)
    return (b.exp() * (b - a)).sum(-1)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits.float(), -1)
    return -(logp.exp() * logp).sum(-1)


def token_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.float(), -1).gather(-1, ids[..., None])[..., 0]
