"""llama2c.py: a PyTorch reference forward of a llama2.c checkpoint, as decbench computes it.

The checkpoint ("legacy" llama2.c format): a 7 x int32 header dim, hidden_dim, n_layers, n_heads,
n_kv_heads, vocab_size, seq_len, then fp32 arrays: token embedding [vocab][dim], attention norms
[L][dim], wq [L][dim][dim], wk and wv [L][kv_dim][dim], wo [L][dim][dim], FFN norms [L][dim], w1
[L][hidden][dim], w2 [L][dim][hidden], w3 [L][hidden][dim], the final norm [dim], two RoPE tables
[seq_len][head_size / 2] that nobody reads, and the classifier [vocab][dim] only when vocab_size
is negative (otherwise the embedding is shared). Matrices are stored [out][in], as torch's Linear.

The forward is decbench's model/forward.c for a llama2.c checkpoint: RMSNorm with eps 1e-5
(x / sqrt(mean(x^2) + eps) * w); RoPE on interleaved pairs (2j, 2j + 1) of each head with
theta 10000^(-2j / head_size), angles computed in float32 as forward.c does; grouped-query
attention (query head h reads kv head h / (n_heads / n_kv_heads)), scaled by 1/sqrt(head_size);
SwiGLU FFN w2(silu(w1 x) * w3 x). It returns the logits and two hidden states of each row: after
the final RMSNorm (the feature EAGLE-1/2 and Medusa-1 read: their references take the base
model's `outputs[0]`, which Hugging Face's LlamaModel returns after its final norm) and before it.

Only numpy and torch (Debian's python3-numpy and python3-torch); no other dependency.
"""
import struct

import numpy as np
import torch

BOS = 1
EOS = 2


class Config:
    def __init__(self, dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len, shared):
        self.dim, self.hidden_dim, self.n_layers = dim, hidden_dim, n_layers
        self.n_heads, self.n_kv_heads, self.vocab_size = n_heads, n_kv_heads, vocab_size
        self.seq_len, self.shared = seq_len, shared
        self.head_size = dim // n_heads
        self.kv_dim = self.head_size * n_kv_heads
        self.norm_eps = 1e-5
        self.rope_theta = 10000.0


def read_checkpoint(path):
    """(Config, dict of float32 torch tensors) of a legacy llama2.c checkpoint; ValueError with the
    file and the reason on a malformed one."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 28:
        raise ValueError(f"{path}: {len(blob)} bytes, shorter than the 28-byte header")
    dim, hidden, L, nh, nkv, vocab, seq = struct.unpack("<7i", blob[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    for name, v in (("dim", dim), ("hidden_dim", hidden), ("n_layers", L), ("n_heads", nh),
                    ("n_kv_heads", nkv), ("vocab_size", vocab), ("seq_len", seq)):
        if v <= 0:
            raise ValueError(f"{path}: header field {name} = {v}, expected > 0")
    if dim % nh or nh % nkv:
        raise ValueError(f"{path}: dim {dim}, n_heads {nh}, n_kv_heads {nkv} do not divide")
    c = Config(dim, hidden, L, nh, nkv, vocab, seq, shared)
    hs, kv = c.head_size, c.kv_dim
    shapes = [("embed", (vocab, dim)), ("rms_att", (L, dim)), ("wq", (L, dim, dim)),
              ("wk", (L, kv, dim)), ("wv", (L, kv, dim)), ("wo", (L, dim, dim)),
              ("rms_ffn", (L, dim)), ("w1", (L, hidden, dim)), ("w2", (L, dim, hidden)),
              ("w3", (L, hidden, dim)), ("rms_final", (dim,)), ("rope_tables", (seq, hs))]
    if not shared:
        shapes.append(("cls", (vocab, dim)))
    need = sum(int(np.prod(s)) for _, s in shapes)
    data = np.frombuffer(blob, dtype="<f4", offset=28)
    if data.size < need:
        raise ValueError(f"{path}: {data.size} floats after the header, expected {need}")
    w, off = {}, 0
    for name, s in shapes:
        n = int(np.prod(s))
        w[name] = torch.from_numpy(data[off:off + n].reshape(s).astype(np.float32))
        off += n
    if shared:
        w["cls"] = w["embed"]
    return c, w


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


class Target(torch.nn.Module):
    """The target model; no parameter is trained (requires_grad False)."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.cfg, w = read_checkpoint(path)
        for k, v in w.items():
            self.register_buffer(k, v, persistent=False)
        c = self.cfg
        half = c.head_size // 2
        # float32 as forward.c: freq = 1 / powf(theta, 2j / head_size), angle = pos * freq
        j = torch.arange(half, dtype=torch.float32)
        freq = 1.0 / torch.pow(torch.tensor(c.rope_theta, dtype=torch.float32), 2.0 * j / c.head_size)
        ang = torch.arange(c.seq_len, dtype=torch.float32)[:, None] * freq[None, :]
        self.register_buffer("cos", torch.cos(ang), persistent=False)
        self.register_buffer("sin", torch.sin(ang), persistent=False)

    def rope(self, x, pos):
        """x [B, T, heads, hs] rotated on pairs (2j, 2j + 1) at positions pos [T]."""
        c, s = self.cos[pos][None, :, None, :], self.sin[pos][None, :, None, :]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = x0 * c - x1 * s
        out[..., 1::2] = x0 * s + x1 * c
        return out

    @torch.no_grad()
    def forward(self, tokens, start=0, cache=None):
        """tokens [B, T] at positions start..start+T-1. cache: None, or a list (one per layer) that
        is extended in place with this pass's K and V ([B, kv_heads, S, hs]) for later passes.
        Returns (logits [B, T, vocab], feature after the final norm [B, T, dim], hidden state
        before it [B, T, dim])."""
        c = self.cfg
        B, T = tokens.shape
        if start + T > c.seq_len:
            raise ValueError(f"positions up to {start + T}, beyond seq_len {c.seq_len}")
        pos = torch.arange(start, start + T)
        x = self.embed[tokens]
        rep = c.n_heads // c.n_kv_heads
        for l in range(c.n_layers):
            h = rms_norm(x, self.rms_att[l], c.norm_eps)
            q = (h @ self.wq[l].T).view(B, T, c.n_heads, c.head_size)
            k = (h @ self.wk[l].T).view(B, T, c.n_kv_heads, c.head_size)
            v = (h @ self.wv[l].T).view(B, T, c.n_kv_heads, c.head_size)
            q, k = self.rope(q, pos), self.rope(k, pos)
            k, v = k.transpose(1, 2), v.transpose(1, 2)  # [B, kvh, T, hs]
            if cache is not None:
                if len(cache) > l:
                    k = torch.cat([cache[l][0], k], 2)
                    v = torch.cat([cache[l][1], v], 2)
                    cache[l] = (k, v)
                else:
                    cache.append((k, v))
            S = k.shape[2]
            k = k.repeat_interleave(rep, 1)
            v = v.repeat_interleave(rep, 1)
            att = (q.transpose(1, 2) @ k.transpose(2, 3)) / (c.head_size ** 0.5)  # [B, H, T, S]
            kpos = torch.arange(S) + (start + T - S)
            att = att.masked_fill(kpos[None, :] > pos[:, None], float("-inf"))
            o = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, c.dim)
            x = x + o @ self.wo[l].T
            h = rms_norm(x, self.rms_ffn[l], c.norm_eps)
            f = torch.nn.functional.silu(h @ self.w1[l].T) * (h @ self.w3[l].T)
            x = x + f @ self.w2[l].T
        feat = rms_norm(x, self.rms_final, c.norm_eps)
        return feat @ self.cls.T, feat, x

    def classify(self, feat):
        """The target's classifier (lm_head) on features."""
        return feat @ self.cls.T

    @torch.no_grad()
    def generate(self, prefix, n_new, temperature=0.0, gen=None):
        """Continues the rows of prefix [B, P] (equal lengths) by n_new tokens each, greedy at
        temperature 0 (argmax: the first of equal maxima) or sampled
        from softmax(logits / temperature) with torch.Generator gen. Stops at seq_len. Returns
        [B, P + n] tokens; callers cut each row at its first BOS (llama2.c's end of story)."""
        cache = []
        toks = prefix
        n_new = min(n_new, self.cfg.seq_len - prefix.shape[1])
        logits, _, _ = self.forward(prefix, 0, cache)
        last = logits[:, -1]
        for i in range(n_new):
            if temperature == 0:
                nxt = last.argmax(-1)
            else:
                p = torch.softmax(last / temperature, -1)
                nxt = torch.multinomial(p, 1, generator=gen)[:, 0]
            toks = torch.cat([toks, nxt[:, None]], 1)
            if i + 1 < n_new:
                logits, _, _ = self.forward(nxt[:, None], toks.shape[1] - 1, cache)
                last = logits[:, -1]
        return toks


class Tokenizer:
    """llama2.c's tokenizer file (int32 max_token_length, then per token float32 score, int32
    byte length, bytes); decoding only, as llama2.c prints pieces."""

    def __init__(self, path, vocab_size):
        with open(path, "rb") as f:
            blob = f.read()
        off = 4
        self.pieces = []
        for i in range(vocab_size):
            if off + 8 > len(blob):
                raise ValueError(f"{path}: truncated at token {i}")
            _, n = struct.unpack("<fi", blob[off:off + 8])
            off += 8
            self.pieces.append(blob[off:off + n])
            off += n

    def decode(self, tokens):
        out = bytearray()
        prev = BOS
        for t in tokens:
            p = self.pieces[t]
            if prev == BOS and p.startswith(b" "):
                p = p[1:]
            if len(p) == 6 and p.startswith(b"<0x") and p.endswith(b">"):
                p = bytes([int(p[3:5], 16)])
            out += p
            prev = t
        return out.decode("utf-8", "replace")


def cut_story(tokens):
    """The list of tokens up to (not including) the first BOS after position 0: llama2.c's end of a
    story. tokens[0] is the BOS that starts it."""
    t = list(tokens)
    for i in range(1, len(t)):
        if t[i] == BOS:
            return t[:i]
    return t
