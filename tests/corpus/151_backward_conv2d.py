# conv2d backward: gradients for input, weight and bias of a 1x2x5x5 input with a 3x3 kernel, padding 1, stride 2
from tinygrad import Tensor
x = Tensor([i / 10 - 2 for i in range(50)]).reshape(1, 2, 5, 5)
w = Tensor([i / 20 - 1 for i in range(54)]).reshape(3, 2, 3, 3)
b = Tensor([0.1, -0.1, 0.2])
out = x.conv2d(w, b, stride=2, padding=1).relu()
(out * out).sum().backward()
RESULT = {"dx": x.grad.tolist(), "dw": w.grad.tolist(), "db": b.grad.tolist()}
print(RESULT)
