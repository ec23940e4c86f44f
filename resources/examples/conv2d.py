# a 3x3 convolution over a 1x2x8x8 image with 4 output channels: pooling is movement, the conv is one kernel
from tinygrad import Tensor
x = Tensor([[[[float((c * 64 + i * 8 + j) % 5) for j in range(8)] for i in range(8)] for c in range(2)]])
w = Tensor([[[[float((o + c + i - j) % 3 - 1) for j in range(3)] for i in range(3)] for c in range(2)] for o in range(4)])
y = x.conv2d(w, padding=1).relu()
print(y.shape, y.sum().item())
