# a realized scalar broadcast against a vector; mean subtracted
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 6.0]).realize()
m = x.mean().realize()
RESULT = {"centered": (x - m).tolist(), "m": m.item(), "scaled": (x / x.max()).tolist()}
print(RESULT)
