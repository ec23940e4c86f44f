# conv2d with batch 2, 3 output channels, 3x3 kernel, no padding
from tinygrad import Tensor
x = Tensor([[[[float((b * 50 + c * 25 + i * 5 + j) % 7 - 3) for j in range(5)] for i in range(5)] for c in range(2)] for b in range(2)]).realize()
w = Tensor([[[[float((o * 18 + c * 9 + i * 3 + j) % 5 - 2) for j in range(3)] for i in range(3)] for c in range(2)] for o in range(3)]).realize()
y = x.conv2d(w)
RESULT = {"y": y.tolist(), "shape": list(y.shape)}
print(RESULT)
