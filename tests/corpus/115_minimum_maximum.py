# elementwise minimum/maximum with scalars and tensors, min reduce
from tinygrad import Tensor
x = Tensor([[3.0, -1.0], [0.5, 8.0]]).realize()
y = Tensor([[1.0, 1.0], [1.0, 1.0]]).realize()
RESULT = {"min": x.minimum(y).tolist(), "max": x.maximum(0).tolist(), "rmin": x.min().item(), "rmin1": x.min(axis=1).tolist()}
print(RESULT)
