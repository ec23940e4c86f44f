# nn.Conv2d (padding, stride) with explicit weights, then relu + max_pool2d
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
c1 = nn.Conv2d(2, 3, 3, padding=1)
c1.weight, c1.bias = W(3, 2, 3, 3), W(3, k=2, m=5)
c2 = nn.Conv2d(3, 2, (2, 2), stride=2, bias=False)
c2.weight = W(2, 3, 2, 2, k=5, m=9)
x = W(1, 2, 6, 6, k=3, m=13)
y = c1(x).relu()
z = c2(y)
p = y.max_pool2d(2)
RESULT = {"z": z.tolist(), "p": p.tolist()}
print(RESULT)
