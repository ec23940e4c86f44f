# stack along axis 1, split and chunk
from tinygrad import Tensor
a = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
b = Tensor([5.0, 6.0, 7.0, 8.0]).realize()
s = Tensor.stack(a, b, dim=1)
p, q = s.split(2, dim=0)
RESULT = {"s": s.tolist(), "p": p.tolist(), "q": q.tolist(), "ch": [c.tolist() for c in a.chunk(2)]}
print(RESULT)
