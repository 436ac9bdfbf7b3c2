# F32 safetensors files as dicts of torch tensors, for the PyTorch dev scripts beside this file (replay.py,
# pretrain.py): the project's own loader is src/model/safetensors.ts.
import json, os, struct
import numpy as np
import torch


def read_f32(path):
    """Every tensor of the file, by name; refuses a tensor that is not F32."""
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == '__metadata__':
            continue
        assert info['dtype'] == 'F32', f'{path}: {name} is {info["dtype"]}; these scripts read F32 only'
        s, e = info['data_offsets']
        out[name] = torch.tensor(np.frombuffer(raw[8 + n + s:8 + n + e], dtype=np.float32).reshape(info['shape']).copy())
    return out


def write_f32(path, tensors):
    """Writes the tensors (sorted by name) as F32, through a temporary file moved into place after fsync."""
    header, offset, blobs = {'__metadata__': {'format': 'pt'}}, 0, []
    for name in sorted(tensors):
        b = tensors[name].detach().contiguous().numpy().astype('<f4').tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(tensors[name].shape), 'data_offsets': [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h)
        for b in blobs:
            f.write(b)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
