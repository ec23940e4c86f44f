# cumsum along each axis
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
RESULT = {"c1": x.cumsum(1).tolist(), "c0": x.cumsum(0).tolist()}
print(RESULT)
