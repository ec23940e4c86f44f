from tinygrad import Tensor
from tinygrad.uop.ops import Ops
a = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
b = Tensor([10.0, 20.0, 30.0, 40.0]).realize()
c = a + b
assert c.uop.op is Ops.ADD
assert c.tolist() == [11.0, 22.0, 33.0, 44.0]
print(c.tolist())
