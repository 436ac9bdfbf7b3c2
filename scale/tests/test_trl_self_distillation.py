"""TRL's own self-distillation trainers take `npm run dataset`'s JSONL of a real piplay run as it is: each trains one
CPU step on it (they read `prompt` and `privileged_context`, which they append to the prompt themselves). The
parquet of the same run keeps verl's fields and what verl's search-tool recipe reads."""

from __future__ import annotations

import json

import pytest
import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from piplay_scale.rewards import student_reward
from piplay_scale.text import final_answer

COMMON = dict(
    use_cpu=True,
    bf16=False,
    report_to=[],
    save_strategy="no",
    logging_steps=1,
    disable_tqdm=True,
    max_steps=1,
    per_device_train_batch_size=2,
    num_generations=2,
    max_completion_length=16,
    learning_rate=1e-5,
    distillation_mode="topk_logits",
    distillation_topk=8,
    distillation_add_tail=True,
    distillation_alpha=1.0,
    teacher_model_kind="ema",
    teacher_update_rate=0.05,
)


def em(completions, answer, **_):
    return [student_reward(final_answer(c[-1]["content"]), a) for c, a in zip(completions, answer, strict=True)]


@pytest.fixture(scope="module")
def dataset(run_dataset):
    jsonl, _ = run_dataset
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert rows, f"{jsonl} is empty"
    for r in rows:
        assert (
            r["privileged_context"]
            and r["teacher_prompt"][0]["content"].replace(r["privileged_context"], "") == r["prompt"][0]["content"]
        )
    return load_dataset("json", data_files=str(jsonl), split="train")


def _model(model_dir):
    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32), AutoTokenizer.from_pretrained(
        model_dir
    )


def test_sdft_trains_a_step(dataset, model_dir, tmp_path):
    from trl.experimental.sdft import SDFTConfig, SDFTTrainer

    model, tok = _model(model_dir)
    trainer = SDFTTrainer(
        model=model, args=SDFTConfig(output_dir=str(tmp_path), **COMMON), train_dataset=dataset, processing_class=tok
    )
    trainer.train()
    assert trainer.state.global_step == 1
    assert any("loss" in h for h in trainer.state.log_history)


def test_sdpo_trains_a_step(dataset, model_dir, tmp_path):
    from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

    model, tok = _model(model_dir)
    args = SDPOConfig(output_dir=str(tmp_path), include_environment_feedback=True, **COMMON)
    trainer = SDPOTrainer(model=model, reward_funcs=em, args=args, train_dataset=dataset, processing_class=tok)
    trainer.train()
    assert trainer.state.global_step == 1
    logged = {k for h in trainer.state.log_history for k in h}
    # Every rollout's feedback is the privileged block: the teacher reprompt uses it for all of them.
    assert "self_distillation/feedback_used_fraction" in logged


def test_parquet_keeps_verls_fields_and_the_search_tool_kwargs(run_dataset):
    _, parquet = run_dataset
    rows = load_dataset("parquet", data_files=str(parquet), split="train")
    r = rows[0]
    assert set(r) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    info = r["extra_info"]
    assert info["need_tools_kwargs"] is True
    kwargs = info["tools_kwargs"]["search"]["create_kwargs"]
    assert kwargs == {
        "ground_truth": r["reward_model"]["ground_truth"],
        "question": info["question"],
        "data_source": "piplay",
    }
    assert info["privileged_context"] in info["teacher_prompt"][0]["content"]
