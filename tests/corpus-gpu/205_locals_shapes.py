# local sizes over odd shapes: 32/16/8/4/3/2 lanes, up to three local axes, expanded axes first
from tinygrad import Tensor
a = Tensor([float(i % 13) for i in range(96 * 5)]).reshape(96, 5).realize()
b = Tensor([float(i % 7) for i in range(6 * 10 * 14)]).reshape(6, 10, 14).realize()
c = Tensor([float(i % 5) for i in range(7)]).realize()
RESULT = {"a": (a * 2).sum().item(), "b": (b + 1).permute(2, 0, 1).contiguous().sum().item(),
          "outer": (c.reshape(7, 1) * a[:7].reshape(1, 7, 5)).sum(2).tolist(), "bc": (b[:, :, :1] + c.reshape(1, 1, 7)).sum().item()}
print(RESULT)
