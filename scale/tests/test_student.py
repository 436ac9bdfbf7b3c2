"""The student stage on TRL replayed on piplay's rollouts: the cross-check (both sides: piplay's step, then TRL's),
and the `self` control's meaning: the same EMA teacher and λ, but the teacher reads the student's own prompt, so D
is 0 while the teacher equals the student and grows once the student moves away from its slow copy."""

import json

from transformers import AutoTokenizer

from piplay_scale import crosscheck


def test_crosscheck_against_piplay(piplay_step, capsys):
    assert crosscheck.main([str(piplay_step)]) == 0, capsys.readouterr().out


def test_self_mode_distills_towards_a_slow_copy(piplay_step, model_dir):
    data = json.loads(piplay_step.read_text())
    case = next(c for c in data["cases"] if c["name"] == "full")
    assert case["config"]["ppoEpochs"] == 2
    steps = crosscheck.replay(case, str(model_dir), AutoTokenizer.from_pretrained(model_dir), privileged="self")
    assert len(steps) == 2
    assert steps[0]["distill"] < 1e-6  # same weights, same prompt: the teacher is the student
    assert steps[1]["distill"] > 1e-4  # the student moved (lr 1e-3); the EMA teacher followed by τ = 0.05 only
