# cumsum over 600 elements (two-stage above 512)
from tinygrad import Tensor
x = (Tensor.arange(600) % 3).float().clone("CPU").realize()
c = x.cumsum(0)
RESULT = {"first": c.tolist()[:5], "last": c.tolist()[-3:]}
print(RESULT)
