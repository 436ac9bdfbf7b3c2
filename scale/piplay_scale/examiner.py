"""The examiner stage and data generation (ALGORITHM.md sections 1, 3-5; piplay's src/selfplay/examiner.ts,
data.ts), data-parallel over accelerate's processes.

An examiner step draws `examiner_batch` source documents and hop counts (4:3:2:1) from piplay's seeded stream, so
it draws what piplay draws; the examiner writes a question with search (multi-turn rollouts, rollout.py); its
format reward f is Dr. Zero's; each question with f > 0 is put to n student rollouts, whose k right answers give the
difficulty reward; r = 0.5·f + r_d. HRPO standardises the batch's rewards within each hop count (every process's
questions gathered), and the update is piplay's strictly on-policy L_E = -mean_t A·log π_E(y_t) (+ β_E·k3), a
token-mean over the batch's examiner tokens on every process, with AdamW, the warm-up and gradient clipping.

Data generation: the updated examiner writes the student's training set, each source document's best-formatted of
`examiner_samples` rollouts, keeping questions with f > 0, until `train_questions` are found or the rounds run out.

The examiner is a policy-gradient step, not a GRPO group (one rollout per source document, groups by hop count), so
it runs on accelerate directly rather than on GRPOTrainer; the student stage is TRL's (student.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from trl.models import unwrap_model_for_generation

from .losses import k3, token_logprobs
from .rewards import (
    difficulty_reward,
    examiner_format_reward,
    examiner_reward,
    group_advantages,
    solvable,
    student_reward,
)
from .rng import rng_for
from .rollout import TorchTurns, encode_prompt, run_rollouts, stop_ids_of
from .schedule import warmup_lr, warmup_steps
from .search import Bm25
from .text import Qcp, examiner_prompt, parse_examiner_turns, student_prompt


@dataclass
class ExaminerSettings:
    """The settings of the examiner stage and of data generation, under piplay's names (snake_case)."""

    seed: int = 0
    examiner_batch: int = 8
    hop_weights: list[float] = field(default_factory=lambda: [4, 3, 2, 1])
    n: int = 5
    examiner_lr: float = 1e-4
    weight_decay: float = 0.01
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    grad_clip: float = 0.1
    examiner_beta: float = 0.0
    warmup_steps: int = 0
    temperature: float = 0.6
    top_p: float = 1.0
    max_turns: int = 5
    turn_tokens: int = 128
    tool_tokens: int = 320
    retrieval_top_k: int = 3
    examiner_samples: int = 4
    generation_rounds: int = 4
    empty_updates: str = "apply"

    @staticmethod
    def from_piplay(c: dict) -> ExaminerSettings:
        """The settings of a piplay configuration (its JSON, camelCase)."""
        return ExaminerSettings(
            seed=c["seed"],
            examiner_batch=c["examinerBatch"],
            hop_weights=list(c["hopWeights"]),
            n=c["rolloutsPerQuestion"],
            examiner_lr=c["examinerLr"],
            weight_decay=c["weightDecay"],
            adam_beta1=c["adamBeta1"],
            adam_beta2=c["adamBeta2"],
            grad_clip=c["gradClip"],
            examiner_beta=c["examinerBeta"],
            warmup_steps=warmup_steps(c["lrWarmup"], c["iterations"] * c["examinerSteps"]),
            temperature=c["temperature"],
            top_p=c["topP"],
            max_turns=c["maxTurns"],
            turn_tokens=c["turnTokens"],
            tool_tokens=c["toolTokens"],
            retrieval_top_k=c["retrievalTopK"],
            examiner_samples=c["examinerSamples"],
            generation_rounds=c["generationRounds"],
            empty_updates=c["emptyUpdates"],
        )


@dataclass
class Written:
    """One examiner rollout, parsed and scored for format."""

    index: int
    source: dict
    hops: int
    question: str
    answer: str
    qcp: Qcp
    format: float
    ids: list[int]
    mask: list[int]
    prompt_length: int
    searches: int


class ExaminerStage:
    """The examiner policy with its optimizer, on `accelerator`'s processes."""

    def __init__(
        self, model, tokenizer, settings: ExaminerSettings, corpus: list[dict], accelerator=None, reference=None
    ):
        self.s = settings
        self.tokenizer = tokenizer
        self.corpus = corpus
        self.index = Bm25(corpus)
        self.accelerator = accelerator or Accelerator()
        opt = torch.optim.AdamW(
            model.parameters(),
            lr=settings.examiner_lr,
            betas=(settings.adam_beta1, settings.adam_beta2),
            eps=1e-8,
            weight_decay=settings.weight_decay,
        )
        self.model, self.optimizer = self.accelerator.prepare(model, opt)
        self.reference = reference
        self.steps_taken = 0

    @property
    def unwrapped(self):
        return self.accelerator.unwrap_model(self.model)

    def _turns(self, model, label: str) -> TorchTurns:
        seed = rng_for(self.s.seed, label).seed + self.accelerator.process_index
        gen = torch.Generator(device="cpu").manual_seed(seed)
        return TorchTurns(model, self.tokenizer, temperature=self.s.temperature, top_p=self.s.top_p, generator=gen)

    def _search(self, query: str) -> list[dict]:
        return [p for p, _ in self.index.search(query, self.s.retrieval_top_k)]

    def _rollouts(self, model, prompts: list[list[int]], role: str, label: str):
        """Multi-turn search rollouts of `model` in `role`, with the run's turn budgets and tool."""
        return run_rollouts(
            self._turns(model, label),
            self.tokenizer,
            prompts,
            role=role,
            search=self._search,
            max_turns=self.s.max_turns,
            turn_tokens=self.s.turn_tokens,
            tool_tokens=self.s.tool_tokens,
            stop_ids=stop_ids_of(model, self.tokenizer),
            max_positions=model.config.max_position_embeddings,
        )

    def write_questions(self, items: list[tuple[int, dict, int]], label: str) -> list[Written]:
        """The examiner's rollouts for (index, source, hops) items, parsed and scored for format."""
        if not items:
            return []
        tok = self.tokenizer
        with unwrap_model_for_generation(self.model, self.accelerator) as model:
            prompts = [encode_prompt(tok, examiner_prompt(src, hops)) for _, src, hops in items]
            rollouts = self._rollouts(model, prompts, "examiner", label)
        out = []
        for (i, src, hops), r in zip(items, rollouts, strict=True):
            parsed = parse_examiner_turns(r.policy_turns, [s.information for s in r.searches])
            qcp = Qcp(
                source={"title": src["title"], "text": src["text"]},
                hops=hops,
                searches=[{"query": s.query, "information": s.information} for s in r.searches],
                question=parsed.question,
                answer=parsed.answer,
            )
            out.append(
                Written(
                    i,
                    src,
                    hops,
                    parsed.question,
                    parsed.answer,
                    qcp,
                    examiner_format_reward(parsed, hops, src),
                    r.ids,
                    r.mask,
                    r.prompt_length,
                    len(r.searches),
                )
            )
        return out

    def solve_counts(self, student, questions: list[Written], label: str) -> list[int]:
        """k right of n rollouts of `student` (its sampling policy, no training) per question."""
        if not questions:
            return []
        tok, n = self.tokenizer, self.s.n
        prompts = [encode_prompt(tok, student_prompt(q.question)) for q in questions for _ in range(n)]
        with torch.no_grad():
            rollouts = self._rollouts(student, prompts, "student", label)
        return [
            int(sum(student_reward(rollouts[i * n + j].answer(), q.answer) for j in range(n)))
            for i, q in enumerate(questions)
        ]

    def _draw(self, rng, count: int) -> list[tuple[int, dict, int]]:
        """(index, source, hops) as piplay draws them: a source uniformly, then a hop count by the weights."""
        items = []
        for i in range(count):
            src = rng.pick(self.corpus)
            items.append((i, src, rng.weighted_index(self.s.hop_weights) + 1))
        return items

    def _mine(self, items: list) -> list:
        """This process's share of a batch (every P-th item from its rank)."""
        return items[self.accelerator.process_index :: self.accelerator.num_processes]

    def step(self, iteration: int, step: int, student) -> tuple[dict, list[dict]]:
        """One examiner step; `student` is the current student (an unwrapped model). Returns the step's metrics and
        its question records."""
        rng = rng_for(self.s.seed, "examiner", iteration, step)
        items = self._draw(rng.fork("sources"), self.s.examiner_batch)
        written = self.write_questions(self._mine(items), f"examiner/{iteration}/{step}/examiner-sampling")
        valid = [w for w in written if w.format > 0]
        counts = self.solve_counts(student, valid, f"examiner/{iteration}/{step}/student-sampling")
        ks = {w.index: k for w, k in zip(valid, counts, strict=True)}
        n = self.s.n
        local = [
            {
                "index": w.index,
                "hops": w.hops,
                "question": w.question,
                "answer": w.answer,
                "format": w.format,
                "k": ks.get(w.index, 0),
                "n": n if w.index in ks else 0,
                "difficulty": difficulty_reward(ks[w.index], n) if w.index in ks else 0.0,
                "searches": w.searches,
            }
            for w in written
        ]
        for r in local:
            r["reward"] = examiner_reward(r["format"], r["difficulty"])
        records = sorted(gather_object(local), key=lambda r: r["index"])
        advantages = group_advantages([r["reward"] for r in records], [r["hops"] for r in records])
        for r, a in zip(records, advantages, strict=True):
            r["advantage"] = a
        by_index = {r["index"]: r["advantage"] for r in records}
        # --empty-updates skip: rewards equal within every hop group leave every advantage 0, nothing to learn.
        skip = self.s.empty_updates == "skip" and all(a == 0 for a in advantages)
        loss, norm = (
            (0.0, 0.0)
            if skip
            else self.update(
                [{"ids": w.ids, "mask": w.mask, "prompt_length": w.prompt_length} for w in written],
                [by_index[w.index] for w in written],
            )
        )
        valid_all = [r for r in records if r["format"] > 0]
        mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
        metrics = {
            "stage": "examiner",
            "iteration": iteration,
            "step": step,
            "loss": loss,
            "reward": mean([r["reward"] for r in records]),
            "format_reward": mean([r["format"] for r in records]),
            "difficulty_reward": mean([r["difficulty"] for r in valid_all]),
            "valid_share": len(valid_all) / len(records),
            "solvable_share": sum(1 for r in valid_all if solvable(r["k"], n)) / len(records),
            "mean_hops": mean([r["hops"] for r in records]),
            "searches_per_rollout": mean([r["searches"] for r in records]),
            "grad_norm": norm,
            "skipped_updates": 1 if skip else 0,
        }
        return metrics, records

    def update(self, rollouts: list[dict], advantages: list[float]) -> tuple[float, float]:
        """One on-policy step of L_E over this process's rollouts (ids, mask, prompt_length) with their HRPO
        advantages; the token-mean runs over every process's examiner tokens. Returns (L_E, gradient norm)."""
        acc = self.accelerator
        device = acc.device
        pad_id = self.tokenizer.pad_token_id or 0
        width = max((len(r["ids"]) for r in rollouts), default=1)
        ids = torch.tensor(
            [[pad_id] * (width - len(r["ids"])) + r["ids"] for r in rollouts] or [[pad_id]], device=device
        )
        attn = torch.tensor(
            [[0] * (width - len(r["ids"])) + [1] * len(r["ids"]) for r in rollouts] or [[0]], device=device
        )
        mask = torch.tensor(
            [
                [0] * (width - len(r["ids"])) + [m if t >= r["prompt_length"] else 0 for t, m in enumerate(r["mask"])]
                for r in rollouts
            ]
            or [[0]],
            device=device,
        ).float()[:, 1:]
        adv = torch.tensor(advantages or [0.0], dtype=torch.float32, device=device)[:, None]
        pos = (attn.cumsum(-1) - 1).clamp(min=0)
        temperature = self.s.temperature if self.s.temperature > 0 else 1.0
        logits = self.model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False).logits[:, :-1]
        logp = token_logprobs(logits / temperature, ids[:, 1:])
        term = -adv * logp
        if self.s.examiner_beta > 0:
            with torch.no_grad():
                ref_logits = self.reference(input_ids=ids, attention_mask=attn, position_ids=pos).logits[:, :-1]
                ref = token_logprobs(ref_logits / temperature, ids[:, 1:])
            term = term + self.s.examiner_beta * k3(logp, ref)
        local = (term * mask).sum()
        stats = acc.reduce(torch.stack([local.detach(), mask.sum()]), reduction="sum")
        tokens = stats[1].clamp(min=1.0)
        acc.backward(local / tokens * acc.num_processes)
        clip = self.s.grad_clip if self.s.grad_clip > 0 else float("inf")
        norm = acc.clip_grad_norm_(self.model.parameters(), clip)
        self.steps_taken += 1
        for g in self.optimizer.param_groups:
            g["lr"] = warmup_lr(self.s.examiner_lr, self.steps_taken, self.s.warmup_steps)
        self.optimizer.step()
        self.optimizer.zero_grad()
        return float(stats[0] / tokens), float(norm)

    def generate(self, iteration: int, target: int) -> tuple[list[dict], dict]:
        """The student's training set of an iteration: valid questions of the updated examiner, as dataset rows."""
        rng = rng_for(self.s.seed, "generate", iteration)
        out: list[dict] = []
        written_all, rollouts = [], 0
        max_batches = math.ceil(target / self.s.examiner_batch) * self.s.generation_rounds
        b = 0
        while b < max_batches and len(out) < target:
            items = self._draw(rng.fork(f"sources-{b}"), self.s.examiner_batch)
            samples = self.s.examiner_samples
            tries = [(i * samples + j, src, hops) for i, src, hops in items for j in range(samples)]
            mine = self.write_questions(self._mine(tries), f"generate/{iteration}/sampling-{b}")
            got = sorted(
                gather_object([(w.index, w.format, w.question, w.answer, w.hops, w.qcp.to_json()) for w in mine]),
                key=lambda t: t[0],
            )
            rollouts += len(got)
            for i in range(len(items)):
                group = got[i * samples : (i + 1) * samples]
                best = group[0]
                for t in group:
                    if t[1] > best[1]:
                        best = t
                written_all.append(best)
                if best[1] > 0 and len(out) < target:
                    _, _, question, answer, hops, qcp = best
                    out.append(
                        {
                            "prompt": [{"role": "user", "content": student_prompt(question)}],
                            "question": question,
                            "answer": answer,
                            "hops": hops,
                            "id": f"it{iteration}-q{len(out)}",
                            "qcp": qcp,
                        }
                    )
            b += 1
        formats = [t[1] for t in written_all]
        metrics = {
            "stage": "generate",
            "iteration": iteration,
            "questions": len(out),
            "examiner_rollouts": rollouts,
            "valid_share": sum(1 for f in formats if f > 0) / len(formats) if formats else 0.0,
            "format_reward": sum(formats) / len(formats) if formats else 0.0,
        }
        return out, metrics
