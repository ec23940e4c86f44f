# a small conv2d with bias and padding: one fused kernel
from tinygrad import Tensor
x = Tensor([[[[float((c * 16 + i * 4 + j) % 7 - 3) for j in range(4)] for i in range(4)] for c in range(2)]])
w = Tensor([[[[float((o + c * 2 + i * 3 + j) % 5 - 2) for j in range(3)] for i in range(3)] for c in range(2)] for o in range(3)])
b = Tensor([0.5, -1.0, 2.0])
y = x.conv2d(w, b, padding=1)
RESULT = {"y": y.tolist(), "shape": list(y.shape)}
print(RESULT)
