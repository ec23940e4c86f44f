# 2x2 max pool and avg pool on a 1x1x4x4 image
from tinygrad import Tensor
x = Tensor([[[[float((i * 4 + j) * 7 % 13) for j in range(4)] for i in range(4)]]]).realize()
RESULT = {"max": x.max_pool2d().tolist(), "avg": x.avg_pool2d().tolist()}
print(RESULT)
