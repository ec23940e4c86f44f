# two outputs sharing a subexpression in one realize
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
e = (x * 2).exp()
a = e + 1
b = e * 3
Tensor.realize(a, b)
RESULT = {"a": a.tolist(), "b": b.tolist()}
print(RESULT)
