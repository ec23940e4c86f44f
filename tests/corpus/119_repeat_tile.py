# repeat along axes
from tinygrad import Tensor
x = Tensor([[1.0, 2.0], [3.0, 4.0]]).realize()
RESULT = {"r": x.repeat(2, 3).tolist(), "r1": x.repeat(1, 2).tolist()}
print(RESULT)
