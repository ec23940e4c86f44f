# where with broadcast condition and scalar branches; clip
from tinygrad import Tensor
x = Tensor([[-2.0, 0.5, 3.0], [1.0, -0.5, 2.0]]).realize()
c = Tensor([[True], [False]])
RESULT = {"w": c.where(x, 0.0).tolist(), "clip": x.clip(-1, 1).tolist(), "sq": (x * x).tolist()}
print(RESULT)
