# Trains a stream that `npm run pretrain -- ... --write-stream DIR` wrote, in PyTorch on the CPU, as piplay's
# pretraining loop does it (src/pretrain/train.ts): the HF Llama forward of the start model in DIR/model,
# the LM head at loss targets only, masked-mean cross-entropy, clip_grad_norm_, AdamW (beta1 0.9, eps 1e-8,
# decoupled decay on every weight), linear warm-up then cosine decay to lr * minLrRatio.
# Writes OUT as an HF model folder (F32 safetensors, the start model's config and tokenizer), OUT/log.jsonl
# (the loss of every step for the first 50, then every --log-every), and a snapshot folder
# OUT/snapshots/step-N every --save-every steps, so a long run can be probed while it goes.
# Each snapshot also holds optimizer.pt (AdamW's moments and the step), so `--resume OUT/snapshots/step-N` goes
# on from there with the same schedule, batches and moments as the run that wrote it.
# Usage: /usr/bin/python3 scripts/torch-train/pretrain.py DIR OUT [--threads 1] [--log-every 50] [--save-every 2000]
#        [--resume SNAPSHOT]
import argparse, json, math, os, shutil, struct, time
import numpy as np
import torch
from safetensors_f32 import read_f32, write_f32

ap = argparse.ArgumentParser()
ap.add_argument('dir')
ap.add_argument('out')
ap.add_argument('--threads', type=int, default=1)
ap.add_argument('--log-every', type=int, default=50)
ap.add_argument('--save-every', type=int, default=2000)
ap.add_argument('--stop-after', type=int, default=0, help='train only the first N steps of the schedule')
ap.add_argument('--resume', default='', help='a snapshot folder of this run to go on from')
a = ap.parse_args()
torch.set_num_threads(a.threads)

model_dir = os.path.join(a.dir, 'model')
while not os.path.exists(os.path.join(a.dir, 'spec.json')):  # the writer writes it after the start model
    time.sleep(2)
cfg = json.load(open(os.path.join(model_dir, 'config.json')))
spec = json.load(open(os.path.join(a.dir, 'spec.json')))
tr = spec['train']


start_weights = os.path.join(a.resume or model_dir, 'model.safetensors')
P = {k: torch.nn.Parameter(v) for k, v in read_f32(start_weights).items()}
H, L = cfg['hidden_size'], cfg['num_hidden_layers']
nh, nkv = cfg['num_attention_heads'], cfg['num_key_value_heads']
hd = cfg.get('head_dim') or H // nh
eps, theta = cfg['rms_norm_eps'], cfg['rope_theta']
tied = cfg.get('tie_word_embeddings', False)
assert cfg['model_type'] == 'llama' and not cfg.get('attention_bias') and not cfg.get('mlp_bias'), 'a plain Llama only'


def rms(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


rope_cache = {}


def tables(T):  # rope's cos and sin [T, hd] (angles in float64) and the causal mask [T, T], per row length
    if T not in rope_cache:
        inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
        emb = torch.cat([ang, ang], -1)
        rope_cache[T] = (emb.cos().float(), emb.sin().float(), torch.full((T, T), float('-inf')).triu(1))
    return rope_cache[T]


def rope(x, T):  # [B, heads, T, hd], HF's rotate_half convention
    cos, sin, _ = tables(T)
    x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


def hidden(ids):
    B, T = ids.shape
    x = P['model.embed_tokens.weight'][ids]
    causal = tables(T)[2]
    for l in range(L):
        p = f'model.layers.{l}'
        h = rms(x, P[f'{p}.input_layernorm.weight'])
        q = (h @ P[f'{p}.self_attn.q_proj.weight'].T).view(B, T, nh, hd).transpose(1, 2)
        k = (h @ P[f'{p}.self_attn.k_proj.weight'].T).view(B, T, nkv, hd).transpose(1, 2)
        v = (h @ P[f'{p}.self_attn.v_proj.weight'].T).view(B, T, nkv, hd).transpose(1, 2)
        q, k = rope(q, T), rope(k, T)
        k, v = k.repeat_interleave(nh // nkv, 1), v.repeat_interleave(nh // nkv, 1)
        # scores = causal + q k^T / sqrt(hd) in one pass (baddbmm), over [B * heads, T, T]
        scores = torch.baddbmm(causal, q.reshape(B * nh, T, hd), k.reshape(B * nh, T, hd).transpose(1, 2),
                               alpha=1 / math.sqrt(hd))
        att = torch.bmm(torch.softmax(scores, -1), v.reshape(B * nh, T, hd)).view(B, nh, T, hd)
        x = x + att.transpose(1, 2).reshape(B, T, nh * hd) @ P[f'{p}.self_attn.o_proj.weight'].T
        h2 = rms(x, P[f'{p}.post_attention_layernorm.weight'])
        x = x + (torch.nn.functional.silu(h2 @ P[f'{p}.mlp.gate_proj.weight'].T) * (h2 @ P[f'{p}.mlp.up_proj.weight'].T)) @ P[f'{p}.mlp.down_proj.weight'].T
    return rms(x, P['model.norm.weight'])


def lr_at(step):  # learningRate in src/pretrain/train.ts
    warm, floor = tr['warmup'], tr['lr'] * tr['minLrRatio']
    if step < warm:
        return tr['lr'] * (step + 1) / warm
    p = min(1, (step - warm) / max(1, tr['steps'] - warm - 1))
    return floor + 0.5 * (tr['lr'] - floor) * (1 + math.cos(math.pi * p))


for c in spec['lrCheck']:
    assert abs(lr_at(c['step']) - c['lr']) <= 1e-12 * c['lr'], f'schedule differs from the engine at step {c["step"]}'


def save(folder, state=None):
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(model_dir):
        if name != 'model.safetensors':
            shutil.copyfile(os.path.join(model_dir, name), os.path.join(folder, name))
    write_f32(os.path.join(folder, 'model.safetensors'), P)
    if state is not None:
        torch.save(state, os.path.join(folder, 'optimizer.pt'))


steps = tr['steps']


class Stream:
    """The batches in DIR, read step by step; waits for steps the writer has not written yet."""

    def __init__(self, d):
        self.d, self.shapes, self.at = d, [], 0
        self.files = {n: open(os.path.join(d, f'{n}.bin'), 'rb') for n in ('steps', 'ids', 'targets', 'mask')}

    def step(self, k):
        while len(self.shapes) <= k:
            raw = self.files['steps'].read(8)
            if len(raw) < 8:
                self.files['steps'].seek(-len(raw), 1)
                time.sleep(2)
                continue
            self.shapes.append(struct.unpack('<2i', raw))
        rows, seq = self.shapes[k]
        n = rows * seq
        ids = np.frombuffer(self.files['ids'].read(4 * n), dtype=np.int32)
        tgt = np.frombuffer(self.files['targets'].read(4 * n), dtype=np.int32)
        mask = np.frombuffer(self.files['mask'].read(n), dtype=np.uint8)
        assert len(ids) == len(tgt) == len(mask) == n, f'{self.d}: step {k + 1} is cut short'
        return rows, seq, ids, tgt, mask


stream = Stream(a.dir)
params = list(P.values())
opt = torch.optim.AdamW(params, lr=tr['lr'], betas=(0.9, tr['beta2']), eps=1e-8, weight_decay=tr['weightDecay'])
head = P['model.embed_tokens.weight'] if tied else P['lm_head.weight']
os.makedirs(a.out, exist_ok=True)
t0, tokens, first = time.time(), 0, 0
last = a.stop_after or steps
if a.resume:
    state_file = os.path.join(a.resume, 'optimizer.pt')
    if not os.path.exists(state_file):
        raise SystemExit(f'{a.resume}: no optimizer.pt, so this snapshot cannot be resumed; start the run again')
    state = torch.load(state_file)
    opt.load_state_dict(state['opt'])
    first, tokens = state['step'], state['tokens']
    t0 -= state['seconds']
    if first >= last:
        raise SystemExit(f'{a.resume} is at step {first}; the run stops at step {last}: nothing to do')
    for k in range(first):  # skip the batches the run already trained on
        stream.step(k)
log_path = os.path.join(a.out, 'log.jsonl')
if a.resume and os.path.exists(log_path):  # drop what the run logged after the snapshot: it is trained again
    kept = [l for l in open(log_path) if l.strip() and json.loads(l)['step'] <= first]
    open(log_path, 'w').writelines(kept)
log = open(log_path, 'a')
for step in range(first, last):
    rows, seq, ids_np, tgt_np, mask_np = stream.step(step)
    ids = torch.from_numpy(ids_np.astype(np.int64)).view(rows, seq)
    sel = torch.from_numpy(mask_np > 0)
    targets = torch.from_numpy(tgt_np.astype(np.int64))[sel]
    for g in opt.param_groups:
        g['lr'] = lr_at(step)
    h = hidden(ids).reshape(rows * seq, H)[sel]
    loss = torch.nn.functional.cross_entropy(h @ head.T, targets)
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(params, tr['maxGradNorm'])
    opt.step()
    tokens += rows * seq
    if not math.isfinite(loss.item()):
        raise SystemExit(f'step {step + 1}: the loss is {loss.item()}; nothing saved after the last snapshot')
    if step < 50 or (step + 1) % a.log_every == 0 or step + 1 == last:
        sec = time.time() - t0
        log.write(json.dumps({'step': step + 1, 'loss': loss.item(), 'lr': lr_at(step), 'gradNorm': norm.item(),
                              'tokens': tokens, 'seconds': round(sec, 1)}) + '\n')
        log.flush()
        if (step + 1) % a.log_every == 0:
            print(f'{step + 1}/{steps} loss {loss.item():.3f} {tokens / sec:.0f} tok/s {sec / 60:.1f} min', flush=True)
    if (step + 1) % a.save_every == 0 and step + 1 < last:
        save(os.path.join(a.out, 'snapshots', f'step-{step + 1}'),
             {'opt': opt.state_dict(), 'step': step + 1, 'tokens': tokens, 'seconds': time.time() - t0})
save(a.out)
print(f'wrote {a.out}: {last} steps, {tokens} tokens in {(time.time() - t0) / 60:.1f} min', flush=True)
