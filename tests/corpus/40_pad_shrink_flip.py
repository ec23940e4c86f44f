# pad, shrink and flip views materialized by tolist
from tinygrad import Tensor
t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
p = t.pad(((1, 1), (0, 2)))
s = t.shrink(((0, 2), (1, 3)))
f = t.flip(1)
RESULT = {"pad": p.tolist(), "shrink": s.tolist(), "flip": f.tolist()}
print(RESULT)
