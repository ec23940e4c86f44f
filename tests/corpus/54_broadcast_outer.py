# outer product by broadcasting and a row-normalization (reduce broadcast back)
from tinygrad import Tensor
a = Tensor([1.0, 2.0, 3.0]).realize()
b = Tensor([1.0, 10.0, 100.0, 1000.0]).realize()
o = a.reshape(3, 1) * b.reshape(1, 4)
n = o / o.sum(axis=1, keepdim=True)
RESULT = {"outer": o.tolist(), "norm": n.tolist()}
print(RESULT)
