# split (sizes, int), chunk, cat of the pieces in another order, stack
from tinygrad import Tensor
x = Tensor([[float(i * 5 + j) for j in range(5)] for i in range(4)]).realize()
a, b, c = x.split([1, 2, 2], dim=1)
p, q = x.chunk(2)
r = x.split(3, dim=1)
RESULT = {"shapes": [list(t.shape) for t in (a, b, c, p, q, *r)], "cat": c.cat(a, b, dim=1).tolist(),
          "catq": q.cat(p).tolist(), "stack": Tensor.stack(*r[0].chunk(3, dim=1), dim=0).tolist(), "r1": (r[1] * 2).tolist()}
print(RESULT)
