# programs over empty dims are valid (linearize rejected them once)
from tinygrad import Tensor
print(Tensor.arange(4).float().cumsum(0).argmax(0).item())
print((Tensor.ones(2, 0) @ Tensor.ones(0, 3)).tolist())
print(Tensor.ones(0).cumsum(0).tolist())
