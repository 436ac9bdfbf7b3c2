# F32 (and BF16) safetensors files as dicts of torch tensors, for the PyTorch dev scripts (replay.py,
# pretrain.py, ../real-shapes/make-reference.py): the project's own loader is src/model/safetensors.ts.
import json, os, struct
import numpy as np
import torch


def _entries(path):
    """(name, dtype, shape, bytes) of every tensor of the file."""
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    for name, info in header.items():
        if name == '__metadata__':
            continue
        s, e = info['data_offsets']
        yield name, info['dtype'], info['shape'], raw[8 + n + s:8 + n + e]


def read_f32(path):
    """Every tensor of the file, by name; refuses a tensor that is not F32."""
    out = {}
    for name, dtype, shape, data in _entries(path):
        assert dtype == 'F32', f'{path}: {name} is {dtype}; these scripts read F32 only'
        out[name] = torch.tensor(np.frombuffer(data, dtype=np.float32).reshape(shape).copy())
    return out


def read_bf16_f64(path):
    """Every tensor of a BF16 file, by name, widened exactly to float64; refuses a tensor that is not BF16."""
    out = {}
    for name, dtype, shape, data in _entries(path):
        assert dtype == 'BF16', f'{path}: {name} is {dtype}; expected BF16'
        bits = np.frombuffer(data, dtype='<u2').astype(np.uint32) << 16
        out[name] = torch.from_numpy(bits.view(np.float32).astype(np.float64)).reshape(shape)
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
