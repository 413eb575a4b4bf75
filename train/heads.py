"""heads.py: the EAGLE-1/2 head and Medusa-1 heads in PyTorch, and their published file formats.

EAGLE (SafeAILab/EAGLE, eagle/model/cnets1.py `Model`, written anew here from its structure):
  row i reads the target's feature f_i (hidden state after the final norm at position i) and the
  embedding of the token x_{i+1} that follows it:
    h = fc(cat(embed(x_{i+1}), f_i))              fc: Linear(2 * hidden, hidden, bias)
    h = h + o_proj(attention(h))                   no input norm in layer 0
    h = h + down(silu(gate(n)) * up(n)), n = post_attention_layernorm(h)
  and the head's output (no final norm) goes through the TARGET's classifier: it predicts the
  feature f_{i+1} and so the token x_{i+2}. The attention is an ordinary Llama attention over the
  head's own earlier rows (causal; its own KV cache when drafting) with head_dim = hidden /
  num_attention_heads, grouped-query when num_key_value_heads < num_attention_heads, scaled by
  1/sqrt(head_dim), and RoPE at the row's position i in Hugging Face's convention (rotate_half:
  pairs (j, j + head_dim / 2), inv_freq = theta^(-2j / head_dim), cos/sin of cat(freqs, freqs)):
  published heads are trained that way, so ours are too, whatever the target's own convention.
  RMSNorm: x / sqrt(mean(x^2) + rms_norm_eps) * w.
  Published files: config.json (LlamaConfig keys) and model.safetensors with keys fc.weight,
  fc.bias, layers.0.self_attn.{q,k,v,o}_proj.weight, layers.0.mlp.{gate,up,down}_proj.weight,
  layers.0.post_attention_layernorm.weight, and optionally embed_tokens.weight (absent here: the
  reference loads the embedding from the base model, so our heads use the target's).

Medusa-1 (FasterDecoding/Medusa, medusa/model/medusa_model.py): K heads on the target's feature
  f_t (after the final norm), head k (0-based) = Sequential(ResBlock x medusa_num_layers,
  Linear(hidden, vocab, bias=False)), ResBlock(x) = x + silu(Linear(x)) (with bias); head k
  predicts the token x_{t+k+2} (the target's own classifier predicts x_{t+1}). The state dict of
  the ModuleList: "{k}.{j}.linear.weight", "{k}.{j}.linear.bias" for j < medusa_num_layers and
  "{k}.{medusa_num_layers}.weight" for the classifier. (The reference's legacy model,
  medusa_model_legacy.py, has no per-head classifier and reuses the base lm_head; its files hold
  only the ResBlock keys: convert_checkpoint.py says which kind a file is.)

safetensors: an 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape,
data_offsets: [begin, end]}, "__metadata__": {...}}, then the raw little-endian tensors; written
and read here with numpy alone (Debian has no python3-safetensors).
"""
import json
import math
import os
import struct

import numpy as np
import torch
from torch import nn


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), -1)


class EagleHead(nn.Module):
    def __init__(self, hidden, intermediate, n_heads, n_kv_heads, eps=1e-6, theta=10000.0, bias=True,
                 max_pos=2048):
        super().__init__()
        self.hidden, self.intermediate = hidden, intermediate
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = hidden // n_heads
        self.eps, self.theta, self.bias, self.max_pos = eps, theta, bias, max_pos
        hd, kv = self.head_dim, n_kv_heads * (hidden // n_heads)
        self.fc = nn.Linear(2 * hidden, hidden, bias=bias)
        self.q_proj = nn.Linear(hidden, n_heads * hd, bias=False)
        self.k_proj = nn.Linear(hidden, kv, bias=False)
        self.v_proj = nn.Linear(hidden, kv, bias=False)
        self.o_proj = nn.Linear(n_heads * hd, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        self.post_norm = nn.Parameter(torch.ones(hidden))
        inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
        ang = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv[None, :]
        emb = torch.cat((ang, ang), -1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    KEYS = {"fc.weight": "fc.weight", "fc.bias": "fc.bias",
            "layers.0.self_attn.q_proj.weight": "q_proj.weight",
            "layers.0.self_attn.k_proj.weight": "k_proj.weight",
            "layers.0.self_attn.v_proj.weight": "v_proj.weight",
            "layers.0.self_attn.o_proj.weight": "o_proj.weight",
            "layers.0.mlp.gate_proj.weight": "gate_proj.weight",
            "layers.0.mlp.up_proj.weight": "up_proj.weight",
            "layers.0.mlp.down_proj.weight": "down_proj.weight",
            "layers.0.post_attention_layernorm.weight": "post_norm"}

    def published_state(self):
        """The state dict under cnets1.Model's key names (fc.bias only with bias)."""
        own = dict(self.named_parameters())
        return {k: own[v].detach().clone() for k, v in self.KEYS.items() if v in own}

    def load_published(self, tensors):
        own = dict(self.named_parameters())
        for k, v in self.KEYS.items():
            if v not in own:
                continue
            if k not in tensors:
                raise ValueError(f"EAGLE head: tensor {k} missing")
            t = torch.as_tensor(tensors[k], dtype=torch.float32)
            if tuple(t.shape) != tuple(own[v].shape):
                raise ValueError(f"EAGLE head: {k} has shape {tuple(t.shape)}, expected {tuple(own[v].shape)}")
            with torch.no_grad():
                own[v].copy_(t)

    def config(self, vocab_size, target_name):
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                "hidden_size": self.hidden, "intermediate_size": self.intermediate,
                "num_attention_heads": self.n_heads, "num_key_value_heads": self.n_kv_heads,
                "num_hidden_layers": 1, "vocab_size": vocab_size, "rms_norm_eps": self.eps,
                "rope_theta": self.theta, "max_position_embeddings": self.max_pos,
                "hidden_act": "silu", "bias": self.bias, "tie_word_embeddings": False,
                "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2,
                "base_model_name_or_path": target_name}

    @staticmethod
    def from_config(cfg):
        return EagleHead(cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"],
                         cfg.get("num_key_value_heads") or cfg["num_attention_heads"],
                         cfg.get("rms_norm_eps", 1e-6), cfg.get("rope_theta", 10000.0),
                         cfg.get("bias", True), cfg.get("max_position_embeddings", 2048))

    def forward(self, feat, emb, pos, mask=None, past=None):
        """feat [B, N, hidden] target features, emb [B, N, hidden] embeddings of the next tokens,
        pos [B, N] positions. past: None or (K, V) [B, kv_heads, M, head_dim] of earlier rows
        (already rotated); mask [B, N, M + N] bool, True where a row may attend (default: all of
        past and causal among the N rows). Returns (output [B, N, hidden], (K, V) of past + these
        rows)."""
        B, N, _ = feat.shape
        hd = self.head_dim
        h = self.fc(torch.cat((emb, feat), -1))
        q = self.q_proj(h).view(B, N, self.n_heads, hd).transpose(1, 2)
        k = self.k_proj(h).view(B, N, self.n_kv_heads, hd).transpose(1, 2)
        v = self.v_proj(h).view(B, N, self.n_kv_heads, hd).transpose(1, 2)
        c, s = self.cos[pos][:, None], self.sin[pos][:, None]  # [B, 1, N, hd]
        q = q * c + rotate_half(q) * s
        k = k * c + rotate_half(k) * s
        if past is not None:
            k = torch.cat((past[0], k), 2)
            v = torch.cat((past[1], v), 2)
        M = k.shape[2] - N
        if mask is None:
            mask = torch.ones(N, M + N, dtype=torch.bool).tril(M)[None].expand(B, N, M + N)
        rep = self.n_heads // self.n_kv_heads
        kk, vv = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        att = (q @ kk.transpose(2, 3)) / math.sqrt(hd)
        att = att.masked_fill(~mask[:, None], float("-inf"))
        o = (att.softmax(-1) @ vv).transpose(1, 2).reshape(B, N, self.n_heads * hd)
        h = h + self.o_proj(o)
        n = rms_norm(h, self.post_norm, self.eps)
        h = h + self.down_proj(nn.functional.silu(self.gate_proj(n)) * self.up_proj(n))
        return h, (k, v)


class ResBlock(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.linear = nn.Linear(hidden, hidden)
        nn.init.zeros_(self.linear.weight)  # identity at the start, as the reference

    def forward(self, x):
        return x + nn.functional.silu(self.linear(x))


class MedusaHeads(nn.Module):
    def __init__(self, hidden, vocab, n_heads=4, n_layers=1):
        super().__init__()
        self.hidden, self.vocab, self.n_heads, self.n_layers = hidden, vocab, n_heads, n_layers
        # separate ResBlocks per layer (the reference repeats one instance; equal for 1 layer)
        self.heads = nn.ModuleList(
            [nn.Sequential(*[ResBlock(hidden) for _ in range(n_layers)], nn.Linear(hidden, vocab, bias=False))
             for _ in range(n_heads)])

    def forward(self, feat):
        """feat [..., hidden] -> logits [n_heads, ..., vocab]."""
        return torch.stack([h(feat) for h in self.heads])

    def published_state(self):
        return {k: v.detach().clone() for k, v in self.heads.state_dict().items()}

    def load_published(self, tensors):
        own = self.heads.state_dict()
        missing = [k for k in own if k not in tensors]
        if missing:
            raise ValueError(f"Medusa heads: tensor {missing[0]} missing")
        self.heads.load_state_dict({k: torch.as_tensor(tensors[k], dtype=torch.float32) for k in own})

    def config(self, target_name):
        return {"medusa_num_heads": self.n_heads, "medusa_num_layers": self.n_layers,
                "hidden_size": self.hidden, "vocab_size": self.vocab,
                "base_model_name_or_path": target_name, "torch_dtype": "float32"}


# ---- safetensors ---------------------------------------------------------------------------

_DT = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "F64": np.dtype("<f8"), "I64": np.dtype("<i8"),
       "I32": np.dtype("<i4")}


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: torch tensor or numpy array}, written as F32, or as F16 / BF16 when given in
    that type (other types as F32). Keys sorted, as the reference library writes them. Written to
    path.tmp, then renamed: a failure leaves no half-written file."""
    arrs = {}
    for k in sorted(tensors):
        a, dt = tensors[k], None
        if isinstance(a, torch.Tensor):
            a = a.detach().cpu().contiguous()
            if a.dtype == torch.bfloat16:
                a, dt = a.view(torch.int16).numpy(), "BF16"
            else:
                a = a.numpy()
        if dt is None:
            if a.dtype != np.float16:
                a = a.astype(np.float32)
            dt = "F16" if a.dtype == np.float16 else "F32"
        arrs[k] = (dt, np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))))
    header, off = {}, 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for k, (dt, a) in arrs.items():
        header[k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for _, a in arrs.values():
                f.write(a.tobytes())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_safetensors(path):
    """{name: float32 numpy array}; F32, F16 and BF16 tensors; ValueError naming the file and
    tensor on a malformed one."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"{path}: header length {n} beyond the file's {len(blob)} bytes")
    header = json.loads(blob[8:8 + n])
    data = memoryview(blob)[8 + n:]
    out = {}
    for k, d in header.items():
        if k == "__metadata__":
            continue
        b, e = d["data_offsets"]
        shape = tuple(d["shape"])
        if not 0 <= b <= e <= len(data):
            raise ValueError(f"{path}: tensor {k}: data [{b}, {e}) beyond the {len(data)} data bytes")
        raw = bytes(data[b:e])
        if d["dtype"] == "BF16":
            u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            a = u.view(np.float32)
        elif d["dtype"] in _DT:
            a = np.frombuffer(raw, dtype=_DT[d["dtype"]]).astype(np.float32)
        else:
            raise ValueError(f"{path}: tensor {k}: dtype {d['dtype']} not supported")
        if a.size != int(np.prod(shape)):
            raise ValueError(f"{path}: tensor {k}: {a.size} values for shape {list(shape)}")
        out[k] = a.reshape(shape)
    return out
