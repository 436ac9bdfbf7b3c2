"""An export by piplay of a base whose chat template lives in chat_template.jinja (as transformers 5 saves it)
keeps the template: transformers' apply_chat_template works on the exported folder as on the base."""

from conftest import npx
from transformers import AutoModelForCausalLM, AutoTokenizer


def test_piplay_export_keeps_a_jinja_chat_template(model_dir, tmp_path):
    base = tmp_path / "base"
    tok = AutoTokenizer.from_pretrained(model_dir)
    AutoModelForCausalLM.from_pretrained(model_dir).save_pretrained(base)
    tok.save_pretrained(base)
    assert (base / "chat_template.jinja").exists()
    assert "chat_template" not in (base / "tokenizer_config.json").read_text()
    out = tmp_path / "export"
    npx("scripts/scale-check/export-folder.ts", str(base), str(out))
    assert (out / "chat_template.jinja").read_text() == (base / "chat_template.jinja").read_text()
    turn = [{"role": "user", "content": "Question: where?\n"}]
    exported = AutoTokenizer.from_pretrained(out)
    assert exported.apply_chat_template(turn, add_generation_prompt=True, tokenize=False) == tok.apply_chat_template(
        turn, add_generation_prompt=True, tokenize=False
    )
    AutoModelForCausalLM.from_pretrained(out)
