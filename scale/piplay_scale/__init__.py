"""π-Play at scale on TRL: piplay's recipe, checked against piplay (crosscheck.py), run on many processes (run.py).

Modules: text (tags, prompts, privileged blocks, EM), rng (piplay's seeded stream), search (corpus, BM25),
rewards (rewards and group advantages), rollout (multi-turn search rollouts), losses (the terms of ALGORITHM.md
section 5), student (the student stage: TRL's GRPOTrainer with piplay's rollouts, advantages and loss), examiner
(the examiner stage and data generation on accelerate), run (one or more iterations), crosscheck (against piplay)."""
