# max and min along axes with keepdim, and mean of a 3d tensor
from tinygrad import Tensor
x = Tensor([[[float((i * 12 + j * 4 + k) % 9 - 4) for k in range(4)] for j in range(3)] for i in range(2)]).realize()
RESULT = {"max0": x.max(axis=0).tolist(), "min2": x.min(axis=2, keepdim=True).tolist(), "mean12": x.mean(axis=(1, 2)).tolist()}
print(RESULT)
