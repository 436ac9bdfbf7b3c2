"""The student stage on TRL (ALGORITHM.md sections 1, 4-6): `PiPlayStudentTrainer` is TRL's `GRPOTrainer` with

- the rollouts: `rollout_func` runs piplay's multi-turn search rollouts (rollout.py) and returns the sampled ids with
  the tool replies masked out (`env_mask`) and the sampling log-probs, which are the old log-probs of the ratio;
- the advantages: piplay's GRPO (std + 1e-6, unbiased) over each question's n rollouts, gathered over processes;
- the loss, written here, not TRL's: L_S = L_GRPO + β·KL_ref + λ·D, each a token-mean over the masked tokens of the
  whole optimizer step on every process (piplay's), D the top-K KL to an EMA teacher (TRL's SDPO teacher callback:
  teacher <- (1 - τ)·teacher + τ·student after every optimizer step) that scores the student's own rollout tokens
  after the privileged prompt: the student's prompt with the privileged block before the question.

TRL's SDPO/SDFT instead blend (1 - w)·L_policy + w·L_distill and average D per sequence first; docs/at-scale.md
shows how the settings map and why this trainer writes the sum itself.

How the settings map: one student step = one generation batch of `student_batch` questions × n rollouts; its
`mini_batches` optimizer steps are TRL's `steps_per_generation` (gradient accumulation 1), its `ppo_epochs` TRL's
`num_iterations`. AdamW decays every parameter (piplay's, torch's default), the learning rate warms up linearly as
piplay's (step k of W at lr·k/W), and the gradient norm is clipped at `grad_clip` as piplay clips it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch
from accelerate.utils import gather_object
from transformers import TrainerCallback
from trl import GRPOConfig, GRPOTrainer
from trl.experimental.sdpo.teacher_sync import SyncTeacherModelCallback
from trl.models import prepare_deepspeed, prepare_fsdp, unwrap_model_for_generation
from trl.trainer.utils import pad

from .losses import clipped_ratio, entropy, k3, token_logprobs, topk_kl
from .rewards import group_advantages, student_reward
from .rollout import TorchTurns, VllmTurns, encode_prompt, run_rollouts, stop_ids_of
from .schedule import warmup_lr
from .search import Bm25
from .text import Qcp, privileged_block, student_prompt, teacher_prompt

#: The metrics of a student step, as piplay names them (token-means over the step's masked tokens).
STEP_METRICS = ("policy_loss", "distill", "clip_fraction", "kl_ref", "entropy", "ppo_kl")


@dataclass
class StudentConfig(GRPOConfig):
    """GRPOConfig with π-Play's student settings, under piplay's names where TRL has none."""

    pi_lambda: float = field(default=0.0, metadata={"help": "λ, the weight of the top-K distillation term D"})
    topk: int = field(default=50, metadata={"help": "K of the top-K support"})
    tail: bool = field(default=True, metadata={"help": "a tail bucket on each side (else renormalised over K)"})
    kl: str = field(default="reverse", metadata={"help": "reverse (KL(S||T)) or forward"})
    privileged: str = field(default="full", metadata={"help": "full, partial, gt, gt-hop, none or self"})
    notes: str = field(default="passages", metadata={"help": "passages, compact or answer-first"})
    partial_drop: float = field(default=0.5, metadata={"help": "share of the path's words 'partial' removes"})
    pi_seed: int = field(default=0, metadata={"help": "piplay's run seed (what 'partial' removes)"})
    teacher_update_rate: float = field(default=0.05, metadata={"help": "τ, the teacher's EMA rate"})
    teacher_sync_steps: int = field(default=1, metadata={"help": "optimizer steps between EMA updates"})
    max_turns: int = field(default=5, metadata={"help": "assistant turns per rollout at most"})
    turn_tokens: int = field(default=128, metadata={"help": "new tokens per turn at most"})
    tool_tokens: int = field(default=320, metadata={"help": "tokens per tool reply at most"})
    retrieval_top_k: int = field(default=3, metadata={"help": "passages per search"})
    warmup_optimizer_steps: int = field(default=0, metadata={"help": "optimizer steps of the linear warm-up"})
    empty_updates: str = field(
        default="apply",
        metadata={"help": "an update whose rollouts all have advantage 0: 'apply' it, or 'skip' it (no step, no EMA)"},
    )
    rollout_seed: int = field(default=0, metadata={"help": "seed of the rollouts' sampling (per process)"})


def em_reward(completions, em, **_):
    """The student's reward: EM of its last answer, computed with the rollout (piplay_scale.rollout)."""
    return list(em)


def _rollout_func(prompts, trainer):
    return trainer.piplay_rollouts(prompts)


class _EndOfStep(TrainerCallback):
    """After each optimizer step: the step's metrics go to the log (an update skipped for want of evidence adds
    none), and the skip flag is cleared."""

    def __init__(self, trainer: PiPlayStudentTrainer):
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        self.trainer.end_step()


class _TeacherEma(SyncTeacherModelCallback):
    """TRL's EMA teacher update, left out after a skipped update (piplay moves the teacher only with the student)."""

    def __init__(self, trainer: PiPlayStudentTrainer, teacher):
        super().__init__(teacher_model=teacher, accelerator=trainer.accelerator)
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        if not self.trainer.skip_step:
            super().on_step_end(args, state, control, **kwargs)


class PiPlayStudentTrainer(GRPOTrainer):
    """GRPOTrainer with piplay's rollouts, advantages and loss. `train_dataset` rows: `prompt` (the student's chat
    turn), `question`, `answer`, `hops`, `id` and `qcp` (the construction path, for the teacher's block)."""

    def __init__(
        self,
        model,
        args: StudentConfig,
        train_dataset,
        processing_class,
        corpus: list[dict],
        teacher=None,
        rollout_func=None,
        **kwargs,
    ):
        if args.privileged == "none" and args.pi_lambda > 0:
            raise ValueError("--lambda must be 0 with --privileged none (no teacher, no distillation: Dr. Zero)")
        if args.kl not in ("reverse", "forward"):
            raise ValueError(f"--kl: '{args.kl}' is not allowed; use reverse or forward")
        if args.empty_updates not in ("apply", "skip"):
            raise ValueError(f"--empty-updates: '{args.empty_updates}' is not allowed; use apply or skip")
        self.index = Bm25(corpus)
        self._rows: list[dict] = []
        self._step_sums: dict[str, float] = {}
        #: The current optimizer step has no evidence (every advantage 0) and --empty-updates skip: no update.
        self.skip_step = False
        #: Optimizer steps applied (the warm-up counts these only, as piplay's optimizer counts its steps).
        self.applied_steps = 0
        self.skipped_steps = 0
        super().__init__(
            model=model,
            reward_funcs=em_reward,
            args=args,
            train_dataset=train_dataset,
            processing_class=processing_class,
            rollout_func=rollout_func or _rollout_func,
            **kwargs,
        )
        if args.empty_updates == "skip" and self.is_deepspeed_enabled:
            raise ValueError("--empty-updates skip needs the optimizer's step in hand; use apply with DeepSpeed")
        self.generator = torch.Generator(device="cpu").manual_seed(args.rollout_seed + self.accelerator.process_index)
        self.teacher = None
        if args.privileged != "none":
            if teacher is None:
                teacher = copy.deepcopy(self.accelerator.unwrap_model(self.model))
            teacher.requires_grad_(False)
            teacher.eval()
            if self.is_deepspeed_enabled:
                self.teacher = prepare_deepspeed(teacher, self.accelerator)
            elif self.is_fsdp_enabled:
                self.teacher = prepare_fsdp(teacher, self.accelerator)
            else:
                self.teacher = self.accelerator.prepare_model(teacher, evaluation_mode=True)
            self.add_callback(_TeacherEma(self, self.teacher))
        self.add_callback(_EndOfStep(self))

    # -- optimizer and schedule: piplay's AdamW (every parameter decayed) and warm-up

    def get_decay_parameter_names(self, model) -> list[str]:
        return [name for name, _ in model.named_parameters()]

    def create_optimizer(self, model=None):
        opt = super().create_optimizer(model)
        step = opt.step

        def step_unless_skipped(*a, **k):
            if self.skip_step:
                return None
            self.applied_steps += 1
            return step(*a, **k)

        opt.step = step_unless_skipped
        return opt

    def create_scheduler(self, num_training_steps: int, optimizer=None):
        if self.lr_scheduler is None:
            warmup = self.args.warmup_optimizer_steps

            def factor(_: int) -> float:  # the next applied step is piplay's step `applied + 1`
                return warmup_lr(1.0, self.applied_steps + 1, warmup)

            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer or self.optimizer, factor)
            self._created_lr_scheduler = True
        return self.lr_scheduler

    # -- rollouts

    def piplay_rollouts(self, prompts) -> dict:
        """piplay's multi-turn search rollouts of the current student, one per row of the batch."""
        a = self.args
        tok = self.processing_class
        rows = self._rows
        ids = [encode_prompt(tok, student_prompt(r["question"])) for r in rows]
        sync = None
        if self.use_vllm:
            turns = VllmTurns(self)
            sync = self._any_rollout_left
        with unwrap_model_for_generation(
            self.model_wrapped, self.accelerator, gather_deepspeed3_params=a.ds3_gather_for_generation
        ) as model:
            if not self.use_vllm:
                turns = TorchTurns(model, tok, temperature=a.temperature, top_p=a.top_p, generator=self.generator)
            rollouts = run_rollouts(
                turns,
                tok,
                ids,
                role="student",
                search=lambda q: [p for p, _ in self.index.search(q, a.retrieval_top_k)],
                max_turns=a.max_turns,
                turn_tokens=a.turn_tokens,
                tool_tokens=a.tool_tokens,
                stop_ids=stop_ids_of(model, tok),
                max_positions=model.config.max_position_embeddings,
                sync=sync,
            )
        return {
            "prompt_ids": [r.ids[: r.prompt_length] for r in rollouts],
            "completion_ids": [r.response_ids for r in rollouts],
            "logprobs": [r.logprobs[r.prompt_length :] for r in rollouts],
            "env_mask": [r.mask[r.prompt_length :] for r in rollouts],
            "em": [student_reward(r.answer(), row["answer"]) for r, row in zip(rollouts, rows, strict=True)],
            "searches": [len(r.searches) for r in rollouts],
        }

    def _any_rollout_left(self, mine: bool) -> bool:
        return bool(self.accelerator.reduce(torch.tensor([float(mine)], device=self.accelerator.device), "sum") > 0)

    def _teacher_prompt_ids(self, row: dict) -> list[int]:
        a = self.args
        block = privileged_block(
            Qcp.from_json(row["qcp"]),
            a.privileged,
            notes=a.notes,
            seed=f"{a.pi_seed}/{row['id']}",
            drop_fraction=a.partial_drop,
        )
        return encode_prompt(self.processing_class, teacher_prompt(row["question"], block))

    def _generate_and_score_completions(self, inputs):
        self._rows = inputs
        out = super()._generate_and_score_completions(inputs)
        device = self.accelerator.device
        # piplay's GRPO advantages over each question's n rollouts of the whole generation batch (every process),
        # in float64 as piplay computes them.
        rewards = gather_object([float(x["em"]) for x in inputs])
        n = self.num_generations
        adv = group_advantages(rewards, [i // n for i in range(len(rewards))])
        start = self.accelerator.process_index * len(inputs)
        out["advantages"] = torch.tensor(adv[start : start + len(inputs)], dtype=torch.float32, device=device)
        if self.teacher is not None:
            # The teacher's view: each rollout's completion after its question's privileged prompt.
            tp = [torch.tensor(self._teacher_prompt_ids(x)) for x in inputs]
            tmask = [torch.ones_like(t) for t in tp]
            pad_id = self.processing_class.pad_token_id
            out["teacher_prompt_ids"] = pad(tp, padding_value=pad_id, padding_side="left").to(device)
            out["teacher_prompt_mask"] = pad(tmask, padding_value=0, padding_side="left").to(device)
        searches = gather_object([float(x["searches"]) for x in inputs])
        self._metrics["train"]["searches_per_rollout"].append(sum(searches) / len(searches))
        return out

    def _prepare_inputs(self, generation_batch):
        fresh = self.model.training and (
            self._step % (self.args.steps_per_generation * self.num_iterations) == 0 or self._buffered_inputs is None
        )
        inputs = super()._prepare_inputs(generation_batch)
        if fresh:
            self._count_step_tokens()
        return inputs

    def _count_step_tokens(self) -> None:
        """Each buffered slice learns the masked tokens of its optimizer step over every process: the divisor of the
        step's token-means (an optimizer step is `gradient_accumulation_steps` consecutive slices)."""
        buffered = self._buffered_inputs
        tokens = [(b["completion_mask"] * b["tool_mask"]).sum().float() for b in buffered]
        evidence = [(b["advantages"] != 0).sum().float() for b in buffered]
        total = self.accelerator.reduce(torch.stack(tokens + evidence), reduction="sum")
        ga, k = self.args.gradient_accumulation_steps, len(buffered)
        for i, b in enumerate(buffered):
            first = (i // ga) * ga
            b["step_tokens"] = total[first : first + ga].sum()
            b["step_evidence"] = total[k + first : k + first + ga].sum()

    # -- the loss

    def _completion_logits(self, model, prompt_ids, prompt_mask, completion_ids, completion_mask) -> torch.Tensor:
        """Logits / T predicting each completion token, [B, C, V]; positions counted from each row's first token."""
        ids = torch.cat([prompt_ids, completion_ids], 1)
        attn = torch.cat([prompt_mask, completion_mask], 1)
        pos = (attn.cumsum(-1) - 1).clamp(min=0)
        c = completion_ids.size(1)
        logits = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False).logits
        return logits[:, -c - 1 : -1, :] / self.temperature

    def _compute_loss(self, model, inputs):
        a = self.args
        if a.empty_updates == "skip" and float(inputs["step_evidence"]) == 0:
            self.skip_step = True
        completion_ids, completion_mask = inputs["completion_ids"], inputs["completion_mask"]
        mask = (completion_mask * inputs["tool_mask"]).float()
        logits = self._completion_logits(
            model, inputs["prompt_ids"], inputs["prompt_mask"], completion_ids, completion_mask
        )
        logp = token_logprobs(logits, completion_ids)
        old = inputs["sampling_per_token_logps"]
        term, clipped = clipped_ratio(logp, old, inputs["advantages"][:, None], self.epsilon_low, self.epsilon_high)
        sums = {"clip_fraction": (clipped * mask).sum()}
        if self.beta != 0.0:
            ref = self._reference_logprobs(inputs)
            kl = k3(logp, ref)
            term = term + self.beta * kl
            sums["kl_ref"] = (kl.detach() * mask).sum()
        total = (term * mask).sum()
        sums["policy_loss"] = total.detach()
        if self.teacher is not None:
            with torch.no_grad():
                t_logits = self._completion_logits(
                    self.teacher,
                    inputs["teacher_prompt_ids"],
                    inputs["teacher_prompt_mask"],
                    completion_ids,
                    completion_mask,
                )
            d = topk_kl(logits, t_logits, a.topk, tail=a.tail, reverse=a.kl == "reverse")
            d_sum = (d * mask).sum()
            sums["distill"] = d_sum.detach()
            if a.pi_lambda > 0:
                total = total + a.pi_lambda * d_sum
        with torch.no_grad():
            sums["entropy"] = (entropy(logits) * mask).sum()
            sums["ppo_kl"] = ((old - logp) * mask).sum()
        n = inputs["step_tokens"]
        keys = sorted(sums)
        reduced = self.accelerator.reduce(torch.stack([sums[k].float() for k in keys]), reduction="sum") / n
        for k, v in zip(keys, reduced.tolist(), strict=True):
            self._step_sums[k] = self._step_sums.get(k, 0.0) + v
        # Data-parallel training averages the processes' gradients: × processes makes it their sum, so the
        # gradient is that of the token-mean over the step's tokens on every process.
        return total / n * self.accelerator.num_processes

    def _reference_logprobs(self, inputs) -> torch.Tensor:
        with torch.no_grad():
            logits = self._completion_logits(
                self.ref_model,
                inputs["prompt_ids"],
                inputs["prompt_mask"],
                inputs["completion_ids"],
                inputs["completion_mask"],
            )
            return token_logprobs(logits, inputs["completion_ids"])

    def end_step(self) -> None:
        """After an optimizer step: its token-means under piplay's names (D only with a teacher), unless skipped."""
        if self.skip_step:
            self.skipped_steps += 1
        else:
            for k, v in self._step_sums.items():
                self._metrics["train"][k].append(v)
        self._metrics["train"]["skipped_updates"].append(1.0 if self.skip_step else 0.0)
        self._step_sums = {}
        self.skip_step = False
