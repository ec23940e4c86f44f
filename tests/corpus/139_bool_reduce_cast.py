# counting with bool casts, mean of comparisons, where chains
from tinygrad import Tensor
x = Tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]).realize()
pos = (x > 0)
RESULT = {"count": pos.sum(axis=1).tolist(), "frac": pos.float().mean().item(), "sign": (pos.where(1.0, -1.0) * x).tolist()}
print(RESULT)
