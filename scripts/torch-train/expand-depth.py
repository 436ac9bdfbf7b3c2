# Depth expansion of a Llama-family model folder (F32 safetensors), as LLaMA Pro's block expansion does:
# after every layer, a copy of it whose two output projections (self_attn.o_proj, mlp.down_proj) are zero, so
# the new block adds nothing to the residual stream and the expanded model computes exactly what the
# original did. Training then gives the new blocks their own job. A dev tool for pretraining stages:
#
#   /usr/bin/python3 scripts/torch-train/expand-depth.py FROM_FOLDER OUT_FOLDER
#
# OUT_FOLDER must not exist (nothing is overwritten); config.json gets the doubled num_hidden_layers and the
# tokenizer files are copied as they are.
import json, os, shutil, sys
import torch
from safetensors_f32 import read_f32, write_f32

ZEROED = ('self_attn.o_proj.weight', 'mlp.down_proj.weight')


def expand(src, out):
    if os.path.exists(out):
        sys.exit(f'expand-depth: {out} exists; give a new folder (nothing is overwritten)')
    cfg = json.load(open(os.path.join(src, 'config.json')))
    layers = cfg['num_hidden_layers']
    weights = read_f32(os.path.join(src, 'model.safetensors'))
    expanded = {}
    for name, t in weights.items():
        if not name.startswith('model.layers.'):
            expanded[name] = t
            continue
        i, rest = name[len('model.layers.'):].split('.', 1)
        i = int(i)
        assert i < layers, f'{name}: layer {i} of a {layers}-layer config'
        expanded[f'model.layers.{2 * i}.{rest}'] = t
        expanded[f'model.layers.{2 * i + 1}.{rest}'] = torch.zeros_like(t) if rest in ZEROED else t.clone()
    os.makedirs(out)
    cfg['num_hidden_layers'] = 2 * layers
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump(cfg, f, indent=2)
        f.write('\n')
    write_f32(os.path.join(out, 'model.safetensors'), expanded)
    for extra in ('tokenizer.json', 'tokenizer_config.json', 'generation_config.json'):
        if os.path.exists(os.path.join(src, extra)):
            shutil.copy(os.path.join(src, extra), os.path.join(out, extra))
    print(f'expand-depth: {src} ({layers} layers) -> {out} ({2 * layers} layers, {len(expanded)} tensors)')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: expand-depth.py FROM_FOLDER OUT_FOLDER')
    expand(sys.argv[1], sys.argv[2])
