# two scalar reduces of the same input fuse into one kernel
from tinygrad import Tensor
x = Tensor([[float((i * 8 + j) % 11 - 5) for j in range(8)] for i in range(8)]).realize()
y = x.sum() + x.max()
RESULT = y.item()
print(RESULT)
