# 4-d permute + reshape materialized, then a reduce over two axes
from tinygrad import Tensor
x = Tensor([[[[float(a * 24 + b * 12 + c * 4 + d) for d in range(4)] for c in range(3)] for b in range(2)] for a in range(2)]).realize()
p = x.permute(0, 2, 3, 1).reshape(2, 12, 2)
RESULT = {"p": p.tolist(), "s": x.sum(axis=(1, 3)).tolist()}
print(RESULT)
