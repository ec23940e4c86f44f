# a 512x256 broadcast add of a row and a column vector (upcast along the broadcast axes)
from tinygrad import Tensor
r = (Tensor.arange(256) % 9).float().clone("CPU").realize()
c = (Tensor.arange(512) % 4).float().reshape(512, 1).clone("CPU").realize()
y = (r + c).realize()
RESULT = y.sum().item()
print(RESULT)
