# Trains the run that make-fixture.ts wrote to DIR in PyTorch, as piplay's pretraining loop does it
# (src/pretrain/train.ts): HF Llama forward, masked-mean cross-entropy, clip_grad_norm_, AdamW, linear
# warm-up then cosine decay. Writes the loss of every step and statistics of the final weights to OUT.
# Usage: python3 replay.py DIR OUT
import json, math, sys
import numpy as np
import torch
from safetensors_f32 import read_f32

d, out_path = sys.argv[1], sys.argv[2]
cfg = json.load(open(f'{d}/config.json'))
spec = json.load(open(f'{d}/spec.json'))
tr = spec['train']

P = {k: torch.nn.Parameter(v) for k, v in read_f32(f'{d}/weights.safetensors').items()}
H, L, nh, nkv, hd = cfg['hidden'], cfg['layers'], cfg['heads'], cfg['kvHeads'], cfg['headDim']
eps, theta = cfg['rmsEps'], cfg['ropeTheta']

def rms(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

def rope(x, T):  # [B, heads, T, hd], HF's rotate_half convention
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat([ang, ang], -1)
    x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
    return x * emb.cos().float() + torch.cat([-x2, x1], -1) * emb.sin().float()

def forward(ids):
    B, T = ids.shape
    x = P['model.embed_tokens.weight'][ids]
    causal = torch.full((T, T), float('-inf')).triu(1)
    for l in range(L):
        p = f'model.layers.{l}'
        h = rms(x, P[f'{p}.input_layernorm.weight'])
        q = (h @ P[f'{p}.self_attn.q_proj.weight'].T).view(B, T, nh, hd).transpose(1, 2)
        k = (h @ P[f'{p}.self_attn.k_proj.weight'].T).view(B, T, nkv, hd).transpose(1, 2)
        v = (h @ P[f'{p}.self_attn.v_proj.weight'].T).view(B, T, nkv, hd).transpose(1, 2)
        q, k = rope(q, T), rope(k, T)
        k, v = k.repeat_interleave(nh // nkv, 1), v.repeat_interleave(nh // nkv, 1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + causal, -1)
        x = x + (att @ v).transpose(1, 2).reshape(B, T, nh * hd) @ P[f'{p}.self_attn.o_proj.weight'].T
        h2 = rms(x, P[f'{p}.post_attention_layernorm.weight'])
        g = h2 @ P[f'{p}.mlp.gate_proj.weight'].T
        u = h2 @ P[f'{p}.mlp.up_proj.weight'].T
        x = x + (torch.nn.functional.silu(g) * u) @ P[f'{p}.mlp.down_proj.weight'].T
    x = rms(x, P['model.norm.weight'])
    head = P['model.embed_tokens.weight'] if cfg['tieEmbeddings'] else P['lm_head.weight']
    return x @ head.T

steps = tr['steps']
rows, seq = spec['batches']['rows'], spec['batches']['seq']
ids = np.fromfile(f'{d}/ids.bin', dtype=np.int32).reshape(steps, rows, seq)
targets = np.fromfile(f'{d}/targets.bin', dtype=np.int32).reshape(steps, rows, seq)
mask = np.fromfile(f'{d}/mask.bin', dtype=np.float32).reshape(steps, rows, seq)

def lr_at(step):
    warm, floor = tr['warmup'], tr['lr'] * tr['minLrRatio']
    if step < warm:
        return tr['lr'] * (step + 1) / warm
    p = min(1, (step - warm) / max(1, steps - warm - 1))
    return floor + 0.5 * (tr['lr'] - floor) * (1 + math.cos(math.pi * p))

params = list(P.values())
opt = torch.optim.AdamW(params, lr=tr['lr'], betas=(0.9, tr['beta2']), eps=1e-8, weight_decay=tr['weightDecay'])
losses = []
for step in range(steps):
    for g in opt.param_groups:
        g['lr'] = lr_at(step)
    logits = forward(torch.tensor(ids[step].astype(np.int64)))
    sel = torch.tensor(mask[step].reshape(-1) > 0)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1])[sel], torch.tensor(targets[step].reshape(-1).astype(np.int64))[sel])
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, tr['maxGradNorm'])
    opt.step()
    losses.append(loss.item())

def stats(w):
    w = w.detach().double().reshape(-1)
    proj = torch.tensor([((i * 7919) % 101) - 50 for i in range(w.numel())], dtype=torch.float64)
    return [w.sum().item(), (w * w).sum().item(), (w * proj).sum().item()]

json.dump({'torch': torch.__version__, 'loss': losses, 'final': {k: stats(v) for k, v in P.items()}}, open(out_path, 'w'), indent=1)
print('losses', ' '.join(f'{l:.4f}' for l in losses))
