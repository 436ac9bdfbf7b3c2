"""The cross-check: TRL's student and examiner steps replayed on piplay's own rollouts.

`npx tsx scripts/scale-check/piplay-step.ts piplay.json` runs piplay's student and examiner steps on the embedded
tiny model and writes what they did: each case's questions, prompt ids, rollouts (ids, mask, sampling log-probs),
rewards, advantages and the metrics its update reported; the examiner's rollouts with their rewards and HRPO
advantages; and `parity` inputs with piplay's outputs. Here

- every `parity` entry and every prompt, reward and advantage is recomputed and must equal piplay's exactly;
- each student case is trained by `PiPlayStudentTrainer` (TRL's GRPOTrainer) from the same model, its rollout
  function handing over piplay's rollouts: its policy loss, D, clip fraction and gradient norm must equal piplay's
  to `TOLERANCE` relative, step for step of the case's PPO epochs (the second sees moved weights, the EMA-updated
  teacher and clipped ratios);
- the examiner's update on piplay's examiner rollouts (examiner.update) must give piplay's loss and gradient norm.

    python -m piplay_scale.crosscheck piplay.json [--model DIR]

prints one line per check and `cross-check: max rel diff X over N values`; it exits 1 past the tolerance."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import torch
from accelerate import Accelerator
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from .examiner import ExaminerSettings, ExaminerStage
from .rewards import (
    difficulty_reward,
    examiner_format_reward,
    examiner_reward,
    group_advantages,
    student_reward,
)
from .rollout import encode_prompt, encode_tool_reply
from .run import PRESETS, SETTINGS, student_config
from .search import Bm25, corpus_of
from .student import PiPlayStudentTrainer
from .text import (
    Qcp,
    final_answer,
    normalize_answer,
    parse_examiner_turns,
    privileged_block,
    student_prompt,
    teacher_prompt,
)

TOLERANCE = 1e-4
#: The student metrics compared relatively, as piplay's step reports them (means over its optimizer steps).
COMPARED = ("policy_loss", "distill", "clip_fraction", "grad_norm")


class Mismatch(AssertionError):
    pass


def rel_diff(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def expect_equal(what: str, mine, theirs) -> None:
    if mine != theirs:
        raise Mismatch(f"{what}: the package gives {mine!r}, piplay {theirs!r}")


def check_parity(data: dict, tokenizer) -> int:
    """Every re-implemented function against piplay's output on the same inputs; returns how many were checked."""
    p = data["parity"]
    questions = {q["id"]: q for q in p["questions"]}
    for b in p["blocks"]:
        q = questions[b["id"]]
        mine = privileged_block(
            Qcp.from_json(q["qcp"]),
            b["mode"],
            notes=b["notes"],
            seed=f"{p['seed']}/{q['id']}",
            drop_fraction=p["partialDrop"],
        )
        expect_equal(f"privileged block ({b['mode']}, {b['notes']}) of {q['id']}", mine, b["block"])
    corpus = corpus_of("world")
    index = Bm25(corpus)
    for s in p["search"]:
        mine = [{"id": h["id"], "score": score} for h, score in index.search(s["query"], 3)]
        expect_equal(f"BM25 for {s['query']!r}", mine, s["hits"])
    for a in p["answers"]:
        expect_equal(f"normalised {a['text']!r}", normalize_answer(a["text"]), a["normalized"])
    by_id = {x["id"]: x for x in corpus}
    for r in p["replies"]:
        reply = encode_tool_reply(tokenizer, [by_id[i] for i in r["passages"]], r["budget"])
        expect_equal(f"tool reply of {r['passages']} in {r['budget']} tokens", reply.ids, r["ids"])
        expect_equal("its body", reply.body, r["body"])
    for q, ids in zip(p["questions"], p["teacherIds"], strict=True):
        block = privileged_block(Qcp.from_json(q["qcp"]), "full", notes="answer-first", seed=f"{p['seed']}/{q['id']}")
        expect_equal(
            f"teacher prompt ids of {q['id']}", encode_prompt(tokenizer, teacher_prompt(q["question"], block)), ids
        )
    for name, values in PRESETS.items():
        for key in SETTINGS:
            expect_equal(f"--preset {name} --{SETTINGS[key].flag}", values[key], data["presets"][name][key])
    checked = len(p["blocks"]) + len(p["search"]) + len(p["answers"]) + len(p["replies"]) + len(p["teacherIds"])
    return checked + len(PRESETS) * len(SETTINGS)


def _rows(case: dict) -> list[dict]:
    return [
        {
            "prompt": [{"role": "user", "content": student_prompt(q["question"])}],
            "question": q["question"],
            "answer": q["answer"],
            "hops": q["hops"],
            "id": q["id"],
            "qcp": q["qcp"],
        }
        for q in case["questions"]
    ]


def _replay(case: dict, tokenizer):
    """A rollout function that hands over piplay's rollouts of each question, in piplay's order."""
    n = case["config"]["rolloutsPerQuestion"]
    by_question = {q["id"]: case["rollouts"][i * n : (i + 1) * n] for i, q in enumerate(case["questions"])}
    used: Counter = Counter()

    def rollout_func(prompts, trainer):
        out = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [], "em": [], "searches": []}
        for row in trainer._rows:
            r = by_question[row["id"]][used[row["id"]] % n]
            used[row["id"]] += 1
            p = r["promptLength"]
            out["prompt_ids"].append(r["ids"][:p])
            out["completion_ids"].append(r["ids"][p:])
            out["logprobs"].append(r["logprobs"][p:])
            out["env_mask"].append(r["mask"][p:])
            out["em"].append(student_reward(final_answer("\n".join(r["policyTurns"])), row["answer"]))
            out["searches"].append(len(r["searches"]))
        return out

    return rollout_func


def replay(case: dict, model_dir: str, tokenizer, privileged: str | None = None) -> PiPlayStudentTrainer:
    """Trains the case's step with PiPlayStudentTrainer on piplay's rollouts (in another privileged mode if given),
    on one CPU process in f32 as piplay; the trainer, its log holding each optimizer step's metrics."""
    c = case["config"]
    mode = privileged or c["privileged"]
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    # The case's settings as `piplay_scale.run` maps them, for its one step; bf16 autocast would move the logits by
    # far more than the tolerance.
    settings = {**c, "iterations": 1, "studentSteps": 1, "privileged": mode}
    if mode == "none":
        settings["lambda"] = 0
    with tempfile.TemporaryDirectory() as out:
        args = student_config(settings, out, 0, 1, argparse.Namespace(bf16=False, vllm=None), cpu=True)
        trainer = PiPlayStudentTrainer(
            model=model,
            args=args,
            train_dataset=Dataset.from_list(_rows(case)),
            processing_class=tokenizer,
            corpus=corpus_of("world"),
            rollout_func=_replay(case, tokenizer),
        )
        if trainer.teacher is not None and privileged is None:
            for row, ids in zip(_rows(case), case["teacherPromptIds"], strict=True):
                expect_equal(f"teacher prompt ids of {row['id']}", trainer._teacher_prompt_ids(row), ids)
        trainer.train()
    return trainer


def step_logs(trainer: PiPlayStudentTrainer) -> list[dict]:
    """The metrics of each optimizer step a trainer applied."""
    return [h for h in trainer.state.log_history if "policy_loss" in h]


def student_case(case: dict, model_dir: str, tokenizer) -> dict[str, float]:
    """The case's prompts, rewards and advantages (exactly), then its step replayed on TRL: the metrics averaged over
    its optimizer steps as piplay averages them."""
    n = case["config"]["rolloutsPerQuestion"]
    for q, ids in zip(case["questions"], case["studentPromptIds"], strict=True):
        expect_equal(f"student prompt ids of {q['id']}", encode_prompt(tokenizer, student_prompt(q["question"])), ids)
    rewards = [
        student_reward(final_answer("\n".join(r["policyTurns"])), case["questions"][i // n]["answer"])
        for i, r in enumerate(case["rollouts"])
    ]
    expect_equal(f"{case['name']}: rewards", rewards, case["rewards"])
    advantages = group_advantages(rewards, [i // n for i in range(len(rewards))])
    expect_equal(f"{case['name']}: GRPO advantages", advantages, case["advantages"])
    steps = step_logs(replay(case, model_dir, tokenizer))
    if len(steps) != case["metrics"]["optimizer_steps"]:
        raise Mismatch(
            f"{case['name']}: {len(steps)} optimizer steps, piplay took {case['metrics']['optimizer_steps']}"
        )
    return {k: sum(h.get(k, 0.0) for h in steps) / len(steps) for k in (*COMPARED, "ppo_kl", "entropy")}


def examiner_case(data: dict, model_dir: str, tokenizer) -> dict[str, float]:
    """The examiner's rewards and HRPO advantages recomputed (exactly), then its update on piplay's rollouts."""
    e = data["examiner"]
    c = e["config"]
    items = e["items"]
    fmt, rewards = [], []
    for i, it in enumerate(items):
        parsed = parse_examiner_turns(it["policyTurns"], it["informations"])
        f = examiner_format_reward(parsed, it["hops"], it["source"])
        rd = difficulty_reward(it["k"], it["n"]) if it["n"] else 0.0
        expect_equal(f"examiner question {i}", (parsed.question, parsed.answer), (it["question"], it["answer"]))
        expect_equal(f"examiner format reward {i}", f, it["formatReward"])
        expect_equal(f"examiner difficulty reward {i}", rd, it["difficultyReward"])
        fmt.append(f)
        rewards.append(examiner_reward(f, rd))
    expect_equal("examiner rewards", rewards, [it["examinerReward"] for it in items])
    advantages = group_advantages(rewards, [it["hops"] for it in items])
    expect_equal("examiner HRPO advantages", advantages, [it["advantage"] for it in items])
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    stage = ExaminerStage(
        model, tokenizer, ExaminerSettings.from_piplay(c), corpus=corpus_of("world"), accelerator=Accelerator(cpu=True)
    )
    loss, norm = stage.update(
        [{"ids": it["ids"], "mask": it["mask"], "prompt_length": it["promptLength"]} for it in items], advantages
    )
    return {"loss": loss, "grad_norm": norm}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m piplay_scale.crosscheck", description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="the JSON of scripts/scale-check/piplay-step.ts")
    ap.add_argument("--model", default=None, help="the model folder (default: the one the JSON names)")
    a = ap.parse_args(argv)
    data = json.loads(Path(a.data).read_text())
    model_dir = a.model or str(Path(__file__).resolve().parents[2] / data["model"])
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    checked = check_parity(data, tokenizer)
    print(f"cross-check: parity: {checked} prompts, blocks, searches, answers, tool replies and presets equal piplay's")
    worst, values = 0.0, 0
    for case in data["cases"]:
        mine = student_case(case, model_dir, tokenizer)
        theirs = case["metrics"]
        parts = []
        for k in COMPARED:
            if k == "distill" and case["config"]["privileged"] == "none":
                continue
            d = rel_diff(mine[k], theirs[k])
            worst, values = max(worst, d), values + 1
            parts.append(f"{k} {mine[k]:.6g} vs {theirs[k]:.6g} ({d:.1e})")
        print(f"cross-check: student {case['name']}: " + "; ".join(parts))
    ex = examiner_case(data, model_dir, tokenizer)
    parts = []
    for k, theirs in (
        ("loss", data["examiner"]["metrics"]["loss"]),
        ("grad_norm", data["examiner"]["metrics"]["grad_norm"]),
    ):
        d = rel_diff(ex[k], theirs)
        worst, values = max(worst, d), values + 1
        parts.append(f"{k} {ex[k]:.6g} vs {theirs:.6g} ({d:.1e})")
    print("cross-check: examiner: rewards and HRPO advantages equal piplay's exactly; " + "; ".join(parts))
    print(f"cross-check: max rel diff {worst:.1e} over {values} values (tolerance {TOLERANCE:.0e})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
