# reduce, expand back, combine: normalized columns
from tinygrad import Tensor
x = Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).realize()
RESULT = (x / x.sum(axis=0)).tolist()
print(RESULT)
