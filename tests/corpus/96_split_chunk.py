# split by sizes / by int, chunk, and a cat of pieces of different sizes (pad + add)
from tinygrad import Tensor
x = Tensor([[float(i * 5 + j) for j in range(5)] for i in range(4)]).realize()
a, b, c = x.split([1, 2, 2], dim=1)
p, q = x.chunk(2)
r = x.split(3, dim=1)
RESULT = {"shapes": [list(t.shape) for t in (a, b, c, p, q, *r)], "cat": c.cat(a, b, dim=1).tolist(),
          "pq": (p * q).tolist(), "r1": (r[1] * 2).tolist(), "chunk3": [t.shape[1] for t in x.chunk(3, dim=1)]}
print(RESULT)
