# arange with negative step and float steps, used in arithmetic
from tinygrad import Tensor
a = Tensor.arange(10, 0, -3)
b = Tensor.arange(5) * 2 + Tensor.arange(5)
RESULT = {"neg": a.tolist(), "b": b.tolist(), "f": Tensor.arange(-1.0, 1.0, 0.5).tolist()}
print(RESULT)
