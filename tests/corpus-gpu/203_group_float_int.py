# grouped reductions of float and int tensors, a sum of products (dot) and a masked sum
from tinygrad import Tensor, dtypes
h = Tensor([((k * 7) % 9) / 8.0 for k in range(1024)], dtype=dtypes.float32).realize()
i = Tensor([(k * 37) % 101 - 50 for k in range(2048)], dtype=dtypes.int32).realize()
a = Tensor([((k * 3) % 7) / 7.0 for k in range(1024)]).realize()
b = Tensor([((k * 5) % 11) / 11.0 for k in range(1024)]).realize()
RESULT = {"fsum": h.sum().item(), "isum": i.sum().item(), "imax": i.max().item(), "dot": (a * b).sum().item(),
          "masked": (a > 0.5).where(a, 0.0).sum().item()}
print(RESULT)
