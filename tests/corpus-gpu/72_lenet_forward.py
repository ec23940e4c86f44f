# LeNet-like forward with nn layers and explicit weights: conv-relu-pool x2, flatten, linear-relu, linear, log_softmax
from tinygrad import Tensor, nn
def W(*shape, k=7, m=11, s=0.05):
  n = 1
  for d in shape: n *= d
  flat = [((i * k) % m - m // 2) * s for i in range(n)]
  def build(off, dims):
    if len(dims) == 1: return flat[off:off + dims[0]]
    step = 1
    for d in dims[1:]: step *= d
    return [build(off + i * step, dims[1:]) for i in range(dims[0])]
  return Tensor(build(0, list(shape)))
class LeNet:
  def __init__(self):
    self.c1, self.c2 = nn.Conv2d(1, 4, 3), nn.Conv2d(4, 8, 3)
    self.l1, self.l2 = nn.Linear(8 * 2 * 2, 16), nn.Linear(16, 10)
  def __call__(self, x):
    x = self.c1(x).relu().max_pool2d((2, 2))
    x = self.c2(x).relu().max_pool2d((2, 2))
    x = x.flatten(1)
    return self.l2(self.l1(x).relu()).log_softmax()
m = LeNet()
for i, (k, v) in enumerate(sorted(nn.state.get_state_dict(m).items())):
  v.replace(W(*v.shape, k=3 + 2 * i, m=7 + 2 * i))
x = W(2, 1, 14, 14, k=5, m=17, s=0.1)
out = m(x)
RESULT = {"keys": sorted(nn.state.get_state_dict(m).keys()), "nparams": len(nn.state.get_parameters(m)),
          "out": out.tolist(), "pred": out.argmax(1).tolist()}
print(RESULT)
