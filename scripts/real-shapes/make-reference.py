# Float64 reference logits for a real-shape checkpoint (scripts/real-shapes/make-checkpoint.ts, a few layers,
# the full vocabulary): Llama, Qwen2 (q/k/v biases) and Qwen3 (per-head q/k RMSNorm, head_dim 128) computed here
# from their published definitions in PyTorch float64, with rope_theta, GQA and tied embeddings from config.json.
# The reference is small enough to commit: per position the full vocabulary's log-sum-exp and argmax, and the
# logits at a fixed set of ids spread over the vocabulary (both ends, the middle, every shard boundary region).
# A dev tool (Debian's python3-torch); test/unit/oracle/real-widths.test.ts rebuilds the same checkpoint
# from its seed and checks piplay against this file:
#
#   npx tsx scripts/real-shapes/make-checkpoint.ts --model qwen3-0.6b --layers 2 --out /tmp/q3
#   /usr/bin/python3 scripts/real-shapes/make-reference.py /tmp/q3 qwen3-0.6b 2 test/assets/real-widths/qwen3-0.6b.json
import json, math, os, re, sys
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'torch-train'))
from safetensors_f32 import read_bf16_f64  # noqa: E402

IDS_PER_MODEL = 8


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, theta):
    # x [heads, T, hd]; HF's rotate_half layout (the halves of each head, not interleaved pairs).
    hd, T = x.shape[-1], x.shape[-2]
    inv = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    half = hd // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rot * sin


def forward(w, cfg, ids):
    D, H, KV = cfg['hidden_size'], cfg['num_attention_heads'], cfg['num_key_value_heads']
    hd = cfg.get('head_dim') or D // H
    eps, theta, kind = cfg['rms_norm_eps'], cfg['rope_theta'], cfg['model_type']
    T = len(ids)
    x = w['model.embed_tokens.weight'][ids]
    for l in range(cfg['num_hidden_layers']):
        p = f'model.layers.{l}.'
        h = rms_norm(x, w[p + 'input_layernorm.weight'], eps)
        proj = {}
        for name, heads in (('q', H), ('k', KV), ('v', KV)):
            y = h @ w[f'{p}self_attn.{name}_proj.weight'].T
            if kind == 'qwen2':
                y = y + w[f'{p}self_attn.{name}_proj.bias']
            proj[name] = y.view(T, heads, hd).transpose(0, 1)
        q, k, v = proj['q'], proj['k'], proj['v']
        if kind == 'qwen3':
            q = rms_norm(q, w[p + 'self_attn.q_norm.weight'], eps)
            k = rms_norm(k, w[p + 'self_attn.k_norm.weight'], eps)
        q, k = rope(q, theta), rope(k, theta)
        k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))
        a = (s.softmax(-1) @ v).transpose(0, 1).reshape(T, H * hd)
        x = x + a @ w[p + 'self_attn.o_proj.weight'].T
        h = rms_norm(x, w[p + 'post_attention_layernorm.weight'], eps)
        g, u = h @ w[p + 'mlp.gate_proj.weight'].T, h @ w[p + 'mlp.up_proj.weight'].T
        x = x + (torch.nn.functional.silu(g) * u) @ w[p + 'mlp.down_proj.weight'].T
    x = rms_norm(x, w['model.norm.weight'], eps)
    head = w['model.embed_tokens.weight'] if cfg.get('tie_word_embeddings') else w['lm_head.weight']
    return x @ head.T


def main():
    if len(sys.argv) != 5:
        sys.exit('usage: make-reference.py CHECKPOINT_DIR MODEL LAYERS OUT.json')
    folder, model, layers, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if os.path.exists(out):
        sys.exit(f'make-reference: {out} exists; give a new file (nothing is overwritten)')
    cfg = json.load(open(os.path.join(folder, 'config.json')))
    seed = int(re.search(r'Random weights \(seed (\d+)\)', open(os.path.join(folder, 'NOTE.md')).read()).group(1))
    assert cfg['num_hidden_layers'] == layers, f'{folder} has {cfg["num_hidden_layers"]} layers, not {layers}'
    V = cfg['vocab_size']
    # Both ends of the vocabulary, its middle and a spread in between (the last ids sit in the last shard).
    ids = [0, V - 1, V // 2, 11, V - 1000, 12345 % V, 3 * V // 4, 42]
    assert len(ids) == IDS_PER_MODEL
    logits = forward(read_bf16_f64(os.path.join(folder, 'model.safetensors')), cfg, torch.tensor(ids))
    probe = sorted({0, 1, V - 1, V - 2, V // 2, V // 3, 2 * V // 3, *range(97, V, V // 24)})
    ref = {
        'model': model,
        'layers': layers,
        'seed': seed,
        'vocab_size': V,
        'ids': ids,
        'probe_ids': probe,
        'logsumexp': torch.logsumexp(logits, -1).tolist(),
        'argmax': logits.argmax(-1).tolist(),
        'max_logit': logits.max(-1).values.tolist(),
        'logits': logits[:, probe].tolist(),
    }
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    with open(out, 'w') as f:
        json.dump(ref, f)
        f.write('\n')
    print(f'make-reference: {model} ({layers} layers, vocab {V}) -> {out}; '
          f'logit scale {logits.abs().max().item():.3f}')


if __name__ == '__main__':
    main()
