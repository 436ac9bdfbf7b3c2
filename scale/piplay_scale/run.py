"""π-Play iterations on TRL, on one process or many (`accelerate launch`):

    accelerate launch --num_processes 2 -m piplay_scale.run --out runs/scale --model public/models/piplay-tiny \\
        --iterations 1 --examiner-steps 1 --student-steps 1

Per iteration (ALGORITHM.md section 1): W examiner steps (examiner.py), data generation with the updated examiner
(or the questions of `--questions FILE.jsonl`, the JSONL `npm run dataset` writes), then W student steps on TRL
(student.py) with λ of the iteration. The trained student is written to OUT/student as an HF folder (what
`npm run eval -- --model OUT/student` evaluates), every step's metrics to OUT/metrics.jsonl, and a summary to
OUT/summary.json. The settings have piplay's names and its presets' values (`--preset demo`, the default, or
`--preset paper`); `--help` lists them."""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from .examiner import ExaminerSettings, ExaminerStage
from .schedule import lambda_at, warmup_steps
from .search import CorpusError, corpus_of
from .student import PiPlayStudentTrainer, StudentConfig
from .text import NOTES_RENDERINGS, PRIVILEGED_MODES, student_prompt


@dataclass(frozen=True)
class Setting:
    flag: str
    kind: str  # int, float, str, bool, floats
    help: str
    choices: tuple[str, ...] = ()


#: The settings the package runs, under piplay's flags (src/selfplay/config.ts), with its presets' values.
SETTINGS: dict[str, Setting] = {
    "seed": Setting("seed", "int", "seed of every random choice of the run"),
    "iterations": Setting("iterations", "int", "π-Play iterations"),
    "examinerSteps": Setting("examiner-steps", "int", "W: examiner steps per iteration"),
    "studentSteps": Setting("student-steps", "int", "W: student steps per iteration"),
    "examinerBatch": Setting("examiner-batch", "int", "source documents per examiner step"),
    "hopWeights": Setting("hop-weights", "floats", "weights of hop counts 1, 2, ... (the paper's 4,3,2,1)"),
    "rolloutsPerQuestion": Setting("n", "int", "student rollouts per question"),
    "trainQuestions": Setting("train-questions", "int", "training questions per iteration (0: student steps × batch)"),
    "generationRounds": Setting("generation-rounds", "int", "data generation: rounds of examiner batches at most"),
    "examinerSamples": Setting("examiner-samples", "int", "data generation: examiner rollouts per source document"),
    "studentBatch": Setting("student-batch", "int", "questions per student step"),
    "ppoEpochs": Setting("ppo-epochs", "int", "passes over a student step's rollouts"),
    "miniBatches": Setting("mini-batches", "int", "optimizer steps per pass"),
    "microBatch": Setting("micro-batch", "int", "rollouts per forward pass of a process (0: its whole mini-batch)"),
    "epsLow": Setting("eps-low", "float", "clip range below 1"),
    "epsHigh": Setting("eps-high", "float", "clip range above 1"),
    "beta": Setting("beta", "float", "weight of the student's k3 KL to the frozen base"),
    "examinerBeta": Setting("examiner-beta", "float", "weight of the examiner's k3 KL to the frozen base"),
    "lambda": Setting("lambda", "floats", "λ per iteration (the last holds on), e.g. 0.1,0.03,0.03"),
    "topK": Setting("topk", "int", "K of the top-K distillation"),
    "tail": Setting("tail", "bool", "a tail bucket on each side (on) or renormalised over K (off)"),
    "kl": Setting("kl", "str", "direction of D", ("reverse", "forward")),
    "tau": Setting("tau", "float", "teacher EMA rate"),
    "privileged": Setting("privileged", "str", "teacher's privileged context (none = Dr. Zero)", PRIVILEGED_MODES),
    "notes": Setting("notes", "str", "how full and partial notes show the path's documents", NOTES_RENDERINGS),
    "partialDrop": Setting("partial-drop", "float", "share of the path's words 'partial' removes"),
    "lr": Setting("lr", "float", "student learning rate"),
    "examinerLr": Setting("examiner-lr", "float", "examiner learning rate"),
    "weightDecay": Setting("weight-decay", "float", "AdamW weight decay"),
    "gradClip": Setting("grad-clip", "float", "global gradient-norm clip (0: off)"),
    "lrWarmup": Setting("lr-warmup", "float", "share of each policy's optimizer steps of linear warm-up"),
    "emptyUpdates": Setting("empty-updates", "str", "an update with every advantage 0", ("apply", "skip")),
    "adamBeta1": Setting("adam-beta1", "float", "AdamW beta1"),
    "adamBeta2": Setting("adam-beta2", "float", "AdamW beta2"),
    "temperature": Setting("temperature", "float", "rollout sampling temperature"),
    "topP": Setting("top-p", "float", "rollout nucleus mass"),
    "maxTurns": Setting("max-turns", "int", "assistant turns per rollout at most"),
    "turnTokens": Setting("turn-tokens", "int", "new tokens per turn at most"),
    "toolTokens": Setting("tool-tokens", "int", "tokens per tool reply at most"),
    "retrievalTopK": Setting("retrieval-top-k", "int", "passages per search"),
}

_PAPER = {
    "seed": 0,
    "iterations": 3,
    "examinerSteps": 50,
    "studentSteps": 50,
    "examinerBatch": 256,
    "hopWeights": [4, 3, 2, 1],
    "rolloutsPerQuestion": 5,
    "trainQuestions": 0,
    "generationRounds": 4,
    "examinerSamples": 1,
    "studentBatch": 256,
    "ppoEpochs": 1,
    "miniBatches": 1,
    "microBatch": 0,
    "epsLow": 0.2,
    "epsHigh": 0.2,
    "beta": 0,
    "examinerBeta": 0,
    "lambda": [0.1, 0.03, 0.03],
    "topK": 50,
    "tail": True,
    "kl": "reverse",
    "tau": 0.05,
    "privileged": "full",
    "notes": "passages",
    "partialDrop": 0.5,
    "lr": 1e-6,
    "examinerLr": 1e-6,
    "weightDecay": 0.01,
    "gradClip": 0.1,
    "lrWarmup": 0.03,
    "emptyUpdates": "apply",
    "adamBeta1": 0.9,
    "adamBeta2": 0.999,
    "temperature": 1,
    "topP": 1,
    "maxTurns": 5,
    "turnTokens": 500,
    "toolTokens": 500,
    "retrievalTopK": 3,
}
#: piplay's presets: the papers' values, and the demo's for a browser-sized model (the embedded one).
PRESETS = {
    "paper": _PAPER,
    "demo": {
        **_PAPER,
        "iterations": 2,
        "examinerSteps": 8,
        "studentSteps": 8,
        "examinerBatch": 8,
        "examinerSamples": 4,
        "studentBatch": 8,
        "microBatch": 1,
        "notes": "answer-first",
        "lr": 1e-4,
        "examinerLr": 1e-4,
        # π-Play's choice in piplay's dev-world search (results/dev-search-47).
        "lambda": [0.3, 0.1, 0.1],
        "lrWarmup": 0.1,
        "emptyUpdates": "skip",
        "temperature": 0.6,
        "turnTokens": 128,
        "toolTokens": 320,
    },
}


def _parse(kind: str, text: str):
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "bool":
        if text not in ("on", "off", "true", "false"):
            raise ValueError("use on or off")
        return text in ("on", "true")
    if kind == "floats":
        return [float(x) for x in text.split(",") if x.strip()]
    return text


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, dict]:
    ap = argparse.ArgumentParser(prog="python -m piplay_scale.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the run's folder (refused if it holds a student already)")
    ap.add_argument(
        "--model",
        default=str(Path(__file__).resolve().parents[2] / "public/models/piplay-tiny"),
        help="the base: an HF model folder or hub id (default: the embedded piplay-tiny)",
    )
    ap.add_argument("--corpus", default="world", help="'world' (the default world) or a corpus JSONL file")
    ap.add_argument(
        "--questions",
        default=None,
        help="the student's questions from a JSONL of npm run dataset, instead of data generation",
    )
    ap.add_argument("--preset", default="demo", choices=sorted(PRESETS))
    ap.add_argument("--bf16", action="store_true", help="bf16 mixed precision (GPUs; the check runs f32)")
    ap.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", "bfloat16"),
        help="the weights' dtype as loaded (bfloat16 with --bf16 on GPUs for 4B-8B bases)",
    )
    ap.add_argument(
        "--vllm",
        choices=("colocate", "server"),
        default=None,
        help="TRL's vLLM generation for the student's rollouts (GPUs with vLLM; not run here)",
    )
    for key, s in SETTINGS.items():
        ap.add_argument(f"--{s.flag}", dest=key, default=None, help=s.help, metavar=s.kind.upper())
    a = ap.parse_args(argv)
    settings = dict(PRESETS[a.preset])
    for key, s in SETTINGS.items():
        raw = getattr(a, key)
        if raw is None:
            continue
        try:
            value = _parse(s.kind, raw)
        except ValueError as e:
            ap.error(f"--{s.flag}: '{raw}' is not a {s.kind} ({e})")
        if s.choices and value not in s.choices:
            ap.error(f"--{s.flag}: '{value}' is not allowed; use one of {', '.join(s.choices)}")
        settings[key] = value
    lam = settings["lambda"]
    if settings["privileged"] == "none" and any(x > 0 for x in (lam if isinstance(lam, list) else [lam])):
        if getattr(a, "lambda") is not None:
            ap.error("--lambda must be 0 with --privileged none (no teacher, no distillation: Dr. Zero)")
        settings["lambda"] = [0.0]
    return a, settings


def read_questions(path: str) -> list[dict]:
    """The student's training rows from `npm run dataset`'s JSONL (its prompt, answer, hops and path)."""
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        for key in ("qcp", "answer", "hops"):
            if key not in r:
                raise SystemExit(f"--questions: {path}:{n} has no '{key}'; give a JSONL of npm run dataset")
        q = r["qcp"]["question"]
        rows.append(
            {
                "prompt": [{"role": "user", "content": student_prompt(q)}],
                "question": q,
                "answer": r["answer"],
                "hops": r["hops"],
                "id": f"dataset-{len(rows)}",
                "qcp": r["qcp"],
            }
        )
    return rows


def load_model(name: str, dtype: str = "float32"):
    return AutoModelForCausalLM.from_pretrained(name, dtype=getattr(torch, dtype))


def student_config(
    c: dict, out: str, iteration: int, n_processes: int, a: argparse.Namespace, cpu: bool | None = None
) -> StudentConfig:
    """The student stage's TRL settings of piplay's settings `c` (camelCase, as piplay's config.json) for an
    iteration on `n_processes` processes; on the CPU when there is no GPU (or when `cpu` says so)."""
    rollouts = c["studentBatch"] * c["rolloutsPerQuestion"]
    share, rest = divmod(rollouts, n_processes * c["miniBatches"])
    if rest:
        raise SystemExit(
            f"--student-batch × --n ({rollouts} rollouts) must split evenly over {n_processes} processes × "
            f"--mini-batches {c['miniBatches']}"
        )
    # A process's share of a mini-batch passes in micro-batches whose gradients add up (gradient accumulation).
    micro = c["microBatch"] if 0 < c["microBatch"] < share else share
    if share % micro:
        raise SystemExit(f"--micro-batch {micro} must divide the {share} rollouts of a process's mini-batch")
    accumulation = share // micro
    steps = c["studentSteps"] * c["ppoEpochs"] * c["miniBatches"]
    extra = {}
    if a.vllm:
        # A vLLM call is one turn: its budget and stop strings (ALGORITHM.md section 2), the tool reply appended after.
        extra = {
            "use_vllm": True,
            "vllm_mode": a.vllm,
            "max_completion_length": c["turnTokens"],
            "generation_kwargs": {"stop": ["</search>", "</answer>"], "include_stop_str_in_output": True},
        }
    return StudentConfig(
        output_dir=out,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
        bf16=a.bf16,
        use_cpu=not torch.cuda.is_available() if cpu is None else cpu,
        per_device_train_batch_size=micro,
        steps_per_generation=c["miniBatches"] * accumulation,
        gradient_accumulation_steps=accumulation,
        num_generations=c["rolloutsPerQuestion"],
        num_iterations=c["ppoEpochs"],
        max_steps=steps,
        shuffle_dataset=False,
        learning_rate=c["lr"],
        weight_decay=c["weightDecay"],
        adam_beta1=c["adamBeta1"],
        adam_beta2=c["adamBeta2"],
        adam_epsilon=1e-8,
        max_grad_norm=c["gradClip"] if c["gradClip"] > 0 else 1e30,
        temperature=c["temperature"],
        top_p=c["topP"],
        epsilon=c["epsLow"],
        epsilon_high=c["epsHigh"],
        beta=c["beta"],
        pi_lambda=lambda_at(c["lambda"], iteration),
        topk=c["topK"],
        tail=c["tail"],
        kl=c["kl"],
        privileged=c["privileged"],
        notes=c["notes"],
        partial_drop=c["partialDrop"],
        pi_seed=c["seed"],
        teacher_update_rate=c["tau"],
        max_turns=c["maxTurns"],
        turn_tokens=c["turnTokens"],
        tool_tokens=c["toolTokens"],
        retrieval_top_k=c["retrievalTopK"],
        warmup_optimizer_steps=warmup_steps(c["lrWarmup"], steps * c["iterations"]),
        empty_updates=c["emptyUpdates"],
        rollout_seed=c["seed"] * 1000 + iteration,
        seed=c["seed"],
        **extra,
    )


def main(argv: list[str] | None = None) -> int:
    a, c = parse_args(argv)
    out = Path(a.out)
    if (out / "student").exists():
        raise SystemExit(f"--out: {out / 'student'} exists; piplay never overwrites a model: give a new folder")
    acc = Accelerator(cpu=not torch.cuda.is_available(), mixed_precision="bf16" if a.bf16 else "no")
    set_seed(c["seed"])
    try:
        corpus = corpus_of(a.corpus)
    except CorpusError as e:
        raise SystemExit(f"--corpus: {e}") from None
    questions = read_questions(a.questions) if a.questions else None
    tok = AutoTokenizer.from_pretrained(a.model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    student = load_model(a.model, a.dtype).to(acc.device)
    teacher = load_model(a.model, a.dtype).to(acc.device) if c["privileged"] != "none" else None
    examiner_settings = ExaminerSettings.from_piplay(c)
    reference = load_model(a.model, a.dtype).to(acc.device) if c["examinerBeta"] > 0 else None
    stage = ExaminerStage(
        load_model(a.model, a.dtype), tok, examiner_settings, corpus, accelerator=acc, reference=reference
    )
    records: list[dict] = []
    t0 = time.time()

    def log(m: dict) -> None:
        records.append(m)
        if acc.is_main_process:
            print(json.dumps(m), flush=True)

    student_steps = []
    trainer = None
    for it in range(c["iterations"]):
        for step in range(c["examinerSteps"]):
            metrics, _ = stage.step(it, step, student)
            log(metrics)
        if questions is not None:
            rows = questions
        else:
            target = c["trainQuestions"] or c["studentSteps"] * c["studentBatch"]
            rows, gen = stage.generate(it, target)
            log(gen)
        if not rows:
            raise SystemExit(
                f"iteration {it + 1}: the examiner wrote no valid question, so the student has nothing to train on; "
                "give more --generation-rounds or --examiner-samples, a base that follows the examiner prompt, or "
                "--questions FILE.jsonl (npm run dataset)"
            )
        args = student_config(c, str(out / "trl"), it, acc.num_processes, a)
        trainer = PiPlayStudentTrainer(student, args, Dataset.from_list(rows), tok, corpus, teacher=teacher)
        trainer.train()
        for h in trainer.state.log_history:
            if "grad_norm" in h:
                m = {"stage": "student", "iteration": it, **{k: v for k, v in h.items() if not isinstance(v, str)}}
                student_steps.append(m)
                log(m)
        student = trainer.accelerator.unwrap_model(trainer.model)
        if it + 1 < c["iterations"]:
            del trainer
            gc.collect()
    acc.wait_for_everyone()
    dest = out / "student"
    # Every process takes part: under ZeRO-3 or FSDP the weights are gathered from the shards.
    trainer.save_model(str(dest))
    applied = [m for m in student_steps if not m.get("skipped_updates")]
    summary = {
        "processes": acc.num_processes,
        "iterations": c["iterations"],
        "examiner_steps": sum(1 for m in records if m.get("stage") == "examiner"),
        "student_steps": c["iterations"] * c["studentSteps"],
        "optimizer_steps": len(student_steps),
        "skipped_updates": len(student_steps) - len(applied),
        "lambda": [lambda_at(c["lambda"], i) for i in range(c["iterations"])],
        "privileged": c["privileged"],
        "distill_mean": sum(m.get("distill", 0.0) for m in applied) / len(applied) if applied else 0.0,
        "reward_mean": sum(m.get("reward", 0.0) for m in student_steps if "reward" in m)
        / max(1, sum(1 for m in student_steps if "reward" in m)),
        "seconds": time.time() - t0,
        "settings": c,
    }
    if acc.is_main_process:
        (dest / "training_args.bin").unlink(missing_ok=True)
        (out / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in records))
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        print(
            f"run: {acc.num_processes} processes, {summary['examiner_steps']} examiner + {summary['student_steps']} "
            f"student steps, lambda {summary['lambda'][-1]:g}, D mean {summary['distill_mean']:.4g}; the student "
            f"is in {dest}",
            flush=True,
        )
    acc.wait_for_everyone()
    return 0


if __name__ == "__main__":
    sys.exit(main())
