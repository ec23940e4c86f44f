# avg_pool2d / max_pool2d with stride, padding, dilation
from tinygrad import Tensor
x = Tensor([[[[float((i * 7 + j * 3) % 10) for j in range(6)] for i in range(6)]]]).realize()
RESULT = {"avg": x.avg_pool2d(2).tolist(), "avg_s1": x.avg_pool2d((3, 3), stride=1).tolist(),
          "avg_pad": x.avg_pool2d(2, padding=1).tolist(), "max_s": x.max_pool2d(3, stride=2).tolist(),
          "max_dil": x.max_pool2d(2, stride=1, dilation=2).tolist()}
print(RESULT)
