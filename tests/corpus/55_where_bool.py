# bool logic, where with scalars, any/all
from tinygrad import Tensor
x = Tensor([-2.0, -1.0, 0.0, 1.0, 2.0]).realize()
m = (x > -1.5) & (x < 1.5)
RESULT = {"mask": m.tolist(), "clip": m.where(x, 0.0).tolist(), "any": (x > 1).any().item(), "all": (x > -3).all().item(),
          "abs": x.abs().tolist()}
print(RESULT)
