# nn.Linear with explicitly assigned weights: x.linear(w.T, b) = matmul + bias, fused into one kernel per layer
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
l1, l2 = nn.Linear(4, 6), nn.Linear(6, 3, bias=False)
l1.weight, l1.bias, l2.weight = W(6, 4), W(6, k=3, m=5), W(3, 6, k=5, m=13)
x = W(2, 4, k=2, m=9)
h = l1(x).relu()
y = l2(h)
RESULT = {"y": y.tolist(), "bias_none": l2.bias is None, "wshape": list(l1.weight.shape)}
print(RESULT)
