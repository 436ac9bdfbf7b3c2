"""The loss terms against ALGORITHM.md section 5's formulas, written out in float64 here."""

import math

import torch

from piplay_scale.losses import clipped_ratio, k3, topk_kl


def reference_topk_kl(s_logits, t_logits, k, tail, reverse):
    s = torch.log_softmax(s_logits.double(), -1).tolist()
    t = torch.log_softmax(t_logits.double(), -1).tolist()
    top = sorted(range(len(s)), key=lambda j: -s[j])[:k]
    a = [math.exp(s[j]) for j in top]
    b = [math.exp(t[j]) for j in top]
    if tail:  # each tail mass floored at 1e-30 before its log (K = V leaves none), as piplay's kernel
        a.append(max(1e-30, sum(math.exp(s[j]) for j in range(len(s)) if j not in top)))
        b.append(max(1e-30, sum(math.exp(t[j]) for j in range(len(t)) if j not in top)))
    else:
        a = [x / sum(a) for x in a]
        b = [x / sum(b) for x in b]
    p, q = (a, b) if reverse else (b, a)
    return sum(x * (math.log(x) - math.log(y)) for x, y in zip(p, q, strict=True))


def test_topk_kl_every_setting():
    g = torch.Generator().manual_seed(0)
    s = torch.randn(3, 40, generator=g) * 3
    t = torch.randn(3, 40, generator=g) * 3
    for k in (1, 5, 40):
        for tail in (True, False):
            for reverse in (True, False):
                got = topk_kl(s, t, k, tail=tail, reverse=reverse)
                for r in range(3):
                    want = reference_topk_kl(s[r], t[r], k, tail, reverse)
                    assert abs(float(got[r]) - want) < 1e-5 * max(1.0, abs(want)), (k, tail, reverse)


def test_topk_kl_gradient_reaches_the_student_only():
    s = torch.randn(2, 30, requires_grad=True)
    t = torch.randn(2, 30, requires_grad=True)
    topk_kl(s, t, 8).sum().backward()
    assert s.grad is not None and s.grad.abs().sum() > 0 and t.grad is None


def test_clipped_ratio_and_k3():
    logp = torch.tensor([-1.0, -1.0, -1.0, -1.0, -30.0])
    old = torch.tensor([-1.0, -1.5, -0.5, -1.5, 0.0])
    adv = torch.tensor([1.0, 1.0, -1.0, -1.0, 1.0])
    term, clipped = clipped_ratio(logp, old, adv, 0.2, 0.28)
    r = [1.0, math.exp(0.5), math.exp(-0.5), math.exp(0.5), math.exp(-20)]  # the log-ratio clamped at -20
    want = [-min(ri * a, min(max(ri, 0.8), 1.28) * a) for ri, a in zip(r, adv.tolist(), strict=True)]
    assert torch.allclose(term, torch.tensor(want), atol=1e-6)
    # The clipped branch is active where it is strictly smaller: r = e^0.5 > 1.28 with A > 0; r = e^-0.5 < 0.8, A < 0.
    assert clipped.tolist() == [False, True, True, False, False]
    q = torch.tensor([0.3, -0.2])
    assert torch.allclose(k3(torch.zeros(2), q), torch.exp(q) - q - 1)
