"""Fixtures: the repository's model and piplay's own outputs. Each piplay output is taken from the environment when
the scale check (scripts/scale-check.sh) made it already, or made here by the same command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "public" / "models" / "piplay-tiny"


def npx(*args: str) -> None:
    """A piplay command (tsx), from the repository's root; its output shown on failure."""
    r = subprocess.run(["npx", "tsx", *args], cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"npx tsx {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")


@pytest.fixture(scope="session")
def model_dir() -> Path:
    return MODEL


@pytest.fixture(scope="session")
def piplay_step(tmp_path_factory) -> Path:
    """The JSON of scripts/scale-check/piplay-step.ts: piplay's steps on the tiny model ($PIPLAY_STEP_JSON)."""
    given = os.environ.get("PIPLAY_STEP_JSON")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("piplay") / "piplay.json"
    npx("scripts/scale-check/piplay-step.ts", str(out))
    return out


@pytest.fixture(scope="session")
def run_dataset(tmp_path_factory) -> tuple[Path, Path]:
    """`npm run dataset`'s JSONL and parquet of a real piplay run on the tiny model ($PIPLAY_DATASET, the JSONL; the
    parquet beside it): a one-step `npm run train` whose examiner wrote the questions."""
    given = os.environ.get("PIPLAY_DATASET")
    if given:
        return Path(given), Path(given).with_suffix(".parquet")
    d = tmp_path_factory.mktemp("run")
    run = d / "run"
    npx(
        "src/cli/train.ts",
        "--out",
        str(run),
        "--preset",
        "demo",
        "--iterations",
        "1",
        "--examiner-steps",
        "1",
        "--student-steps",
        "1",
        "--examiner-batch",
        "4",
        "--student-batch",
        "2",
        "--n",
        "2",
        "--eval-at-start",
        "off",
        "--eval-per-hop",
        "0",
        "--examiner-samples",
        "1",
        "--generation-rounds",
        "1",
        "--rollout-samples",
        "0",
    )
    npx("src/cli/dataset.ts", "--run", str(run), "--out", str(d / "data.jsonl"))
    npx("src/cli/dataset.ts", "--run", str(run), "--out", str(d / "data.parquet"))
    return d / "data.jsonl", d / "data.parquet"
