# python scalars and full(buffer=False)-style constants realize to nothing until read
from tinygrad import Tensor
c = Tensor(3.0) * 2
c.realize()
RESULT = {"c": c.item(), "ones_like": (Tensor.arange(4) * 0 + 1).tolist()}
print(RESULT)
