# an attention block forward: q/k/v projections, causal scaled_dot_product_attention over 2 heads, output projection,
# residual + layernorm
from tinygrad import Tensor, nn
def W(*shape, k=7, m=11, s=0.1):
  n = 1
  for d in shape: n *= d
  flat = [((i * k) % m - m // 2) * s for i in range(n)]
  def build(off, dims):
    if len(dims) == 1: return flat[off:off + dims[0]]
    step = 1
    for d in dims[1:]: step *= d
    return [build(off + i * step, dims[1:]) for i in range(dims[0])]
  return Tensor(build(0, list(shape)))
B, T, D, H = 1, 4, 8, 2
wq, wk, wv, wo = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
for i, l in enumerate((wq, wk, wv, wo)): l.weight, l.bias = W(D, D, k=3 + i, m=7 + 2 * i), W(D, k=2 + i, m=5)
ln = nn.LayerNorm(D)
x = W(B, T, D, k=5, m=13)
q, k, v = [l(x).reshape(B, T, H, D // H).transpose(1, 2) for l in (wq, wk, wv)]
a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
y = ln(x + wo(a))
RESULT = {"y": y.tolist()}
print(RESULT)
