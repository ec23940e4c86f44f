# eye, expand then reshape, and a broadcast multiply with a column
from tinygrad import Tensor
e = Tensor.eye(3)
c = Tensor([[1.0], [2.0], [3.0]]).realize()
r = c.expand(3, 2).reshape(2, 3)
RESULT = {"eye": e.tolist(), "r": r.tolist(), "ec": (e * c).tolist()}
print(RESULT)
