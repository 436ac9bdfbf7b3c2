# Diagnostic: how many steps a tiny Llama needs to learn the copy task, per setting (PyTorch, CPU).
# Usage: python3 torch_sweep.py NAME key=value ...   (keys: std lr steps batch seq hidden layers heads kv alphabet vocab wd span_lo span_hi)
import math, sys, time
import numpy as np
import torch
torch.set_num_threads(1)
a = dict(std=0.02, lr=3e-3, steps=600, batch=8, seq=64, hidden=96, layers=2, heads=4, kv=2, alphabet=64, vocab=256, wd=0.01, span_lo=4, span_hi=24, seed=0, warm=-1)
for kv_ in sys.argv[2:]:
    k, v = kv_.split('='); a[k] = type(a[k])(float(v)) if isinstance(a[k], float) else int(v)
torch.manual_seed(a['seed'])
H, L, nh, nkv = a['hidden'], a['layers'], a['heads'], a['kv']
hd = H // nh; I_ = max(16, round(H * 8 / 3 / 16) * 16); V = a['vocab']
def w(*s): return torch.nn.Parameter(torch.randn(*s) * a['std'])
P = {'emb': w(V, H), 'norm': torch.nn.Parameter(torch.ones(H))}
for l in range(L):
    P.update({f'{l}.q': w(H, H), f'{l}.k': w(nkv * hd, H), f'{l}.v': w(nkv * hd, H), f'{l}.o': w(H, H),
              f'{l}.g': w(I_, H), f'{l}.u': w(I_, H), f'{l}.d': w(H, I_),
              f'{l}.n1': torch.nn.Parameter(torch.ones(H)), f'{l}.n2': torch.nn.Parameter(torch.ones(H))})
def rms(x, w_): return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w_
T = a['seq']
inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).double() / hd))
ang = torch.arange(T).double()[:, None] * inv[None]
emb = torch.cat([ang, ang], -1); COS, SIN = emb.cos().float(), emb.sin().float()
def rope(x):
    x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
    return x * COS + torch.cat([-x2, x1], -1) * SIN
MASK = torch.full((T, T), float('-inf')).triu(1)
def forward(ids):
    B = ids.shape[0]
    x = P['emb'][ids]
    for l in range(L):
        h = rms(x, P[f'{l}.n1'])
        q = (h @ P[f'{l}.q'].T).view(B, T, nh, hd).transpose(1, 2)
        k = (h @ P[f'{l}.k'].T).view(B, T, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, 1)
        v = (h @ P[f'{l}.v'].T).view(B, T, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, 1)
        att = torch.softmax(rope(q) @ rope(k).transpose(-1, -2) / math.sqrt(hd) + MASK, -1)
        x = x + (att @ v).transpose(1, 2).reshape(B, T, H) @ P[f'{l}.o'].T
        h2 = rms(x, P[f'{l}.n2'])
        x = x + (torch.nn.functional.silu(h2 @ P[f'{l}.g'].T) * (h2 @ P[f'{l}.u'].T)) @ P[f'{l}.d'].T
    return rms(x, P['norm']) @ P['emb'].T
rng = np.random.default_rng(a['seed'])
def batch():
    I = np.zeros((a['batch'], T), np.int64); Tg = np.zeros_like(I); M = np.zeros(I.shape, bool)
    for r in range(a['batch']):
        row, rep = [], []
        while len(row) < T + 1:
            n = a['span_lo'] + rng.integers(a['span_hi'] - a['span_lo'] + 1)
            sp = list(rng.integers(a['alphabet'], size=n)); row += sp + sp; rep += [0] * n + [1] * n
        I[r] = row[:T]; Tg[r] = row[1:T + 1]; M[r] = [bool(rep[t + 1] and rep[t]) for t in range(T)]
    return torch.tensor(I), torch.tensor(Tg), torch.tensor(M)
opt = torch.optim.AdamW(list(P.values()), lr=a['lr'], betas=(0.9, 0.95), weight_decay=a['wd'])
n = a['steps']; warm = a['warm'] if a['warm'] >= 0 else min(100, n * 5 // 100)
def lr_at(s):
    if s < warm: return a['lr'] * (s + 1) / warm
    p = min(1, (s - warm) / max(1, n - warm - 1)); return a['lr'] * 0.1 + 0.45 * a['lr'] * (1 + math.cos(math.pi * p))
hist = []; t0 = time.time(); marks = []
for s in range(n):
    for g in opt.param_groups: g['lr'] = lr_at(s)
    I, Tg, M = batch()
    loss = torch.nn.functional.cross_entropy(forward(I)[M], Tg[M])
    opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0); opt.step()
    hist.append(loss.item())
    if (s + 1) % (n // 10) == 0: marks.append(f'{np.mean(hist[-20:]):.2f}')
print(f'{sys.argv[1]:<24} {" ".join(marks)}  ({time.time() - t0:.0f}s)', flush=True)
