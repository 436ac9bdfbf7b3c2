"""The student stage on TRL replayed on piplay's rollouts: the cross-check (both sides: piplay's step, then TRL's);
the `self` control's meaning: the same EMA teacher and λ, but the teacher reads the student's own prompt, so D is 0
while the teacher equals the student and grows once the student moves away from its slow copy; and
--empty-updates skip: an update without evidence moves neither the weights nor the teacher."""

import copy
import json

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from piplay_scale import crosscheck


def test_crosscheck_against_piplay(piplay_step, capsys):
    assert crosscheck.main([str(piplay_step)]) == 0, capsys.readouterr().out


def test_self_mode_distills_towards_a_slow_copy(piplay_step, model_dir):
    data = json.loads(piplay_step.read_text())
    case = next(c for c in data["cases"] if c["name"] == "full")
    assert case["config"]["ppoEpochs"] == 2
    trainer = crosscheck.replay(case, str(model_dir), AutoTokenizer.from_pretrained(model_dir), privileged="self")
    steps = crosscheck.step_logs(trainer)
    assert len(steps) == 2
    assert steps[0]["distill"] < 1e-6  # same weights, same prompt: the teacher is the student
    assert steps[1]["distill"] > 1e-4  # the student moved (lr 1e-3); the EMA teacher followed by τ = 0.05 only


def test_an_update_without_evidence_is_skipped(piplay_step, model_dir):
    data = json.loads(piplay_step.read_text())
    case = copy.deepcopy(next(c for c in data["cases"] if c["name"] == "full"))
    for r in case["rollouts"]:
        r["policyTurns"] = []  # no answer: every reward 0, every advantage 0
    case["config"]["emptyUpdates"] = "skip"
    trainer = crosscheck.replay(case, str(model_dir), AutoTokenizer.from_pretrained(model_dir))
    assert trainer.skipped_steps == 2 and trainer.applied_steps == 0
    assert crosscheck.step_logs(trainer) == []
    base = AutoModelForCausalLM.from_pretrained(model_dir).state_dict()
    for name, w in trainer.model.state_dict().items():
        assert torch.equal(w, base[name]), name
    teacher = trainer.accelerator.unwrap_model(trainer.teacher).state_dict()
    for name, w in teacher.items():
        assert torch.equal(w, base[name]), name
